package dev.hamilock.k8s.stack;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.bind.DevicePluginHandoff;
import dev.hamilock.bind.ExtenderFilter;
import dev.hamilock.bind.HamiFlows;
import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.store.LockBackend;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.LockStackSettings;
import dev.hamilock.k8s.bind.KubernetesCluster;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The whole hami-lock stack for one {@link ApiClient}, wired once from one {@link
 * LockStackSettings}, exposing HAMi's flows — not its parts — as client-java's {@code
 * LeaderElector} exposes {@code run}/{@code close} and not its lock:
 *
 * <ul>
 *   <li>{@link #podBinder()}: the scheduler-extender Bind with re-fit under the node lock ({@code
 *       pkg/scheduler/scheduler.go} Bind, spec §2.3, §3.4);
 *   <li>{@link #extenderFilter()}: the extender Filter on fresh usage (spec §2.2);
 *   <li>{@link #devicePluginHandoff(String)}: a device plugin's side of the bind → Allocate
 *       hand-off ({@code pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go}, spec §3);
 *   <li>{@link #awaitReady(Duration)} and {@link #close()}.
 * </ul>
 *
 * Inside: the {@link KubernetesCluster} ports, one {@link LockBackend} (default {@link
 * KubernetesLockStack#nodeAnnotationBackend}: annotation locks on Node objects and one node watch
 * feeding every key's wake-up queue; {@link Builder#backend} plugs another), one node lock per lock
 * key the registry's vendors name ({@code DeviceVendor.nodeLockKey()}, e.g. {@code
 * hami.io/mutex.lock} for NVIDIA), all built from the same settings, and ONE gang-aware {@link
 * NodeLockAcquirer} that the bind flow uses.
 *
 * <pre>{@code
 * ApiClient client = Config.defaultClient();
 * try (KubernetesHamiStack hami = KubernetesHamiStack.builder(client)   // VendorRegistry.discover()
 *         .lockTimeout(Duration.ofMinutes(5)).listener(metrics).build()) {
 *     hami.awaitReady(Duration.ofSeconds(10));
 *     BindResult r = hami.podBinder().bind("default", "train-0", podUid, "gpu-node-1");
 *     switch (r.outcome()) {
 *         case BOUND -> log.info("bound in {} (lock wait {})", r.timings().total(), r.timings().lockWait());
 *         case CONTENDED, TIMED_OUT, DOES_NOT_FIT -> retryLater(r.reason());
 *         default -> fail(r.reason());
 *     }
 * }
 * // a Java device plugin on node gpu-node-1, in its Allocate handler:
 * HandoffResult h = hami.devicePluginHandoff("NVIDIA").allocate("gpu-node-1", List.of(1));
 * }</pre>
 *
 * <p><b>Threads.</b> The stack starts one daemon thread when the watch is on: the one node watch
 * that serves every lock key ({@code NodeLockWatch}, named {@code hami-lock-node-watch-N}); none
 * when it is off. The flows run on the calling thread ({@code bindAsync} on the caller's executor).
 * {@link #close()} stops and joins the watch thread (up to 5 s). OkHttp's connection-pool and
 * dispatcher threads belong to the {@code ApiClient} passed in; the stack does not own or stop
 * them.
 *
 * <p><b>After {@link #close()}.</b> Unlike a lock-only {@link KubernetesLockStack}, whose close
 * stops only its watch and leaves the lock usable (waiters then poll), every flow of this stack
 * refuses new work with a typed failure instead of acting on a stack whose release watch is gone:
 * {@code podBinder().bind} returns {@code BindOutcome.FAILED} (never {@code BOUND}; the pod is not
 * read, nothing is written, no lock is taken), {@code extenderFilter().filter} returns a decision
 * that chooses no node and carries a {@code FlowFailure} of kind {@code REJECTED}, a hand-off's
 * {@code allocate} returns {@code HandoffResult.Status.ERROR} (nothing served, no lock released);
 * {@link #awaitReady} returns false. The message names the closed stack. The refusal is at the
 * reads every flow starts with; writes and lock releases still go through, so a bind in flight when
 * {@code close()} is called can still clean up. A read on an interrupted thread stops with kind
 * {@code INTERRUPTED} (an HTTP server that interrupts a request past its deadline stops it at the
 * next read).
 *
 * <p>The flows are created once and shared (all are thread-safe); the hand-off of a vendor is one
 * instance, so its calls are serialized as HAMi's plugin-wide mutex serializes Allocate.
 * Thread-safe.
 */
public final class KubernetesHamiStack implements HamiFlows, AutoCloseable {

  private final VendorRegistry registry;
  private final LockStackSettings settings;
  private final Map<String, NodeLock> locksByKey;
  private final NodeLockProvider nodeLocks;
  private final StackPorts ports;
  private final StackPorts filterPorts;
  private final LockBackend backend;
  private final PodBinder podBinder;
  private final ExtenderFilter extenderFilter;
  private final ConcurrentMap<String, DevicePluginHandoff> handoffs = new ConcurrentHashMap<>();

  private KubernetesHamiStack(
      VendorRegistry registry,
      LockStackSettings settings,
      StackPorts ports,
      Map<String, NodeLock> locksByKey,
      LockBackend backend,
      Builder b) {
    this.registry = registry;
    this.backend = backend;
    this.settings = settings;
    this.ports = ports;
    this.filterPorts = ports.reading(b.filterReader != null ? b.filterReader : ports);
    this.locksByKey = Collections.unmodifiableMap(locksByKey);
    this.nodeLocks =
        key -> {
          NodeLock l = locksByKey.get(key);
          checkArgument(
              l != null,
              "no node lock for key \"%s\"; this stack locks %s",
              key,
              locksByKey.keySet());
          return l;
        };
    // ONE acquire loop for the bind flow; it opens and closes its own waiter handles on every key's
    // fair wake-up queue and reports its waits to the settings' listener
    NodeLockAcquirer acquirer = NodeLockAcquirer.create(settings.lock());
    PodBinder.Builder pb =
        PodBinder.builder(ports, ports, registry, nodeLocks)
            .acquirer(acquirer)
            .refitUnderLock(b.refitUnderLock)
            .clock(settings.lock().clock());
    ExtenderFilter.Builder fb =
        ExtenderFilter.builder(filterPorts, registry).clock(settings.lock().clock());
    PodFitter fitter =
        b.fitter != null ? b.fitter : b.flags != null ? b.flags.podFitter(registry) : null;
    if (fitter != null) {
      pb.fitter(fitter);
      fb.fitter(fitter);
    }
    if (b.writeFilterAnnotations) {
      fb.writeAnnotations(ports);
    } else {
      fb.writer(ports);
    }
    this.podBinder = pb.build();
    this.extenderFilter = fb.build();
  }

  /**
   * @param apiClient the configured client (base path, credentials); request timeouts are applied
   *     per call, so its own read timeout does not matter
   * @return a builder with: {@link VendorRegistry#discover()}, {@link LockStackSettings#defaults()}
   *     (HAMi's retry policy 100 ms poll / 28 s / extender HTTP timeout 30 s, request timeout 10 s,
   *     5 attempts, lock timeout from {@code HAMI_NODELOCK_EXPIRE} or 5 min, release watch on,
   *     system UTC clock), re-fit under the lock on, Filter annotations written
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  /**
   * @param apiClient the configured client
   * @param settings the lock stack's settings as a whole (their key is replaced by each vendor's
   *     lock key)
   * @return a builder preset with {@code settings}
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(ApiClient apiClient, LockStackSettings settings) {
    return builder(apiClient).settings(settings);
  }

  /**
   * @return the enabled device vendors
   */
  @Override
  public VendorRegistry registry() {
    return registry;
  }

  /**
   * @return the settings every lock stack was built from (key: the first lock key)
   */
  public LockStackSettings settings() {
    return settings;
  }

  /**
   * @return the lock keys this stack holds locks for, sorted
   */
  public List<String> lockKeys() {
    return List.copyOf(locksByKey.keySet());
  }

  /**
   * @return the bind flow (one shared, thread-safe instance; fails after {@link #close()})
   */
  @Override
  public PodBinder podBinder() {
    return podBinder;
  }

  /**
   * @return the extender filter step (one shared, thread-safe instance; a failed decision after
   *     {@link #close()})
   */
  @Override
  public ExtenderFilter extenderFilter() {
    return extenderFilter;
  }

  /**
   * @return the Filter's reader ({@link Builder#filterReader}, default the stack's fresh reads)
   *     behind the stack's gate (refuses reads after {@link #close()} or on an interrupted thread)
   */
  @Override
  public ClusterReader filterReader() {
    return filterPorts;
  }

  /**
   * The device-plugin hand-off of one vendor, with that vendor's node lock.
   *
   * @param vendor the vendor's common word, e.g. {@code NVIDIA}
   * @return the hand-off (the same instance for the same vendor; its calls fail after {@link
   *     #close()})
   * @throws NullPointerException if {@code vendor} is null
   * @throws IllegalArgumentException naming the vendor if it is blank, not registered or names no
   *     lock key
   */
  public DevicePluginHandoff devicePluginHandoff(String vendor) {
    requireNonBlank(vendor, "vendor");
    DeviceVendor v =
        registry
            .vendor(vendor)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "vendor \""
                            + vendor
                            + "\" is not registered; registered: "
                            + registry.vendors().stream().map(DeviceVendor::commonWord).toList()));
    String key =
        v.nodeLockKey()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "vendor "
                            + vendor
                            + " names no node lock key, so its device plugin has no hand-off lock"));
    NodeLock lock = nodeLocks.forKey(key);
    return handoffs.computeIfAbsent(
        v.commonWord(), w -> DevicePluginHandoff.create(ports, ports, v, lock));
  }

  /**
   * Waits until every lock key's release watch has listed the nodes and opened its stream, so
   * waiting gang members are woken by releases (what an extender's {@code /readyz} answers). With
   * the watch off it returns true at once.
   *
   * @param timeout how long to wait in total; not negative
   * @return true if ready within {@code timeout}; false on timeout or once closed
   * @throws InterruptedException if interrupted while waiting
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  public boolean awaitReady(Duration timeout) throws InterruptedException {
    Validation.notNegative("timeout", timeout);
    if (ports.isClosed()) {
      return false;
    }
    Optional<ReleaseFeeder> watch = backend.releases();
    if (watch.isPresent() && !watch.get().awaitSynced(timeout)) {
      return false;
    }
    return !ports.isClosed();
  }

  /**
   * The release watch's state per lock key, for health checks and diagnostics (read-only; the watch
   * stays the stack's). Every key is served by the backend's one release feeder ({@link
   * ReleaseFeeder}, e.g. the node watch), so every entry shows that watch: the same {@code
   * connected}, and {@code relists} and {@code releases} are that watch's totals over all keys, not
   * per key (do not sum them across entries).
   *
   * @return one entry per lock key, sorted by key; empty with the watch off
   */
  public List<LockWatchState> lockWatchStates() {
    return backend
        .releases()
        .map(
            w ->
                locksByKey.keySet().stream()
                    .map(
                        key ->
                            new LockWatchState(
                                key, w.isConnected(), w.relistCount(), w.releaseCount()))
                    .toList())
        .orElse(List.of());
  }

  /**
   * The release watch serving one lock key, as of the call. The watch is the stack's one shared
   * node watch, the same for every key: the counts are its totals over all keys.
   *
   * @param key the lock key this entry is for
   * @param connected whether the shared watch stream is open now (waiters then wake on releases)
   * @param relists how many times the shared watch listed the nodes (1 after start; more after
   *     reconnects), for all keys together
   * @param releases how many lock releases (value present to absent) the shared watch has seen,
   *     summed over all keys, not this key's alone
   */
  public record LockWatchState(String key, boolean connected, long relists, long releases) {}

  /**
   * @return whether {@link #close()} was called
   */
  public boolean isClosed() {
    return ports.isClosed();
  }

  /**
   * Refuses new flow calls (see the class comment) and stops every lock watch thread. Idempotent.
   * Unlike {@link KubernetesLockStack#close()}, after which the lock stays usable, this stack's
   * flows refuse work after it.
   */
  @Override
  public void close() {
    ports.close();
    backend.close();
  }

  @Override
  public String toString() {
    return "KubernetesHamiStack[vendors="
        + registry.vendors().stream().map(DeviceVendor::commonWord).toList()
        + ", lockKeys="
        + locksByKey.keySet()
        + ", refitUnderLock="
        + podBinder.refitUnderLock()
        + (ports.isClosed() ? ", closed" : "")
        + "]";
  }

  /**
   * Builder for {@link KubernetesHamiStack}: the {@link LockStackSettings} setters (inherited, each
   * declared once: lock timeout and its precedence, retry policy, request timeout, attempts, watch,
   * clocks, listener, owner liveness, liveness cache TTL, environment), plus what only the whole
   * stack has: vendors, fitter, re-fit, Filter annotations, the watch's client or a backend, and
   * where the flows' pod Warning Events go. The settings' {@code key} is replaced by each vendor's
   * lock key. Not thread-safe.
   */
  public static final class Builder extends LockStackSettings.Configurer<Builder> {
    private final ApiClient apiClient;
    private ApiClient watchApiClient;
    private VendorRegistry registry;
    private boolean refitUnderLock = true;
    private boolean writeFilterAnnotations = true;
    private PodFitter fitter;
    private LockBackend backend;
    private ClusterReader reader;
    private ClusterWriter writer;
    private ClusterReader filterReader;
    private HamiSchedulerFlags flags;

    private Builder(ApiClient apiClient) {
      this.apiClient = apiClient;
    }

    @Override
    protected Builder self() {
      return this;
    }

    /**
     * @param registry the enabled vendors (default {@link VendorRegistry#discover()}: every {@code
     *     DeviceVendor} on the class or module path)
     * @return this builder
     */
    public Builder registry(VendorRegistry registry) {
      this.registry = registry;
      return this;
    }

    /**
     * @param on re-check and re-fit the allocation under the node lock (default true); false trusts
     *     the Filter's annotations as HAMi does and can over-commit GPUs
     * @return this builder
     */
    public Builder refitUnderLock(boolean on) {
      this.refitUnderLock = on;
      return this;
    }

    /**
     * @param on whether {@link ExtenderFilter#filter} writes HAMi's Filter annotations on the
     *     chosen node (default true, as HAMi's Filter does, so other schedulers count the choice)
     * @return this builder
     */
    public Builder writeFilterAnnotations(boolean on) {
      this.writeFilterAnnotations = on;
      return this;
    }

    /**
     * Runs the locks on {@code backend} instead of {@link
     * KubernetesLockStack#nodeAnnotationBackend} with its node watch (e.g. another client's store
     * and release feeder). The stack owns it: it creates every key's lock, then starts it, and
     * closes it with the stack.
     *
     * @param backend the backend, or {@code null} for the default
     * @return this builder
     */
    public Builder backend(LockBackend backend) {
      this.backend = backend;
      return this;
    }

    /**
     * @param watchApiClient client for the lock watches (default derived from the main client,
     *     without read timeout)
     * @return this builder
     */
    public Builder watchApiClient(ApiClient watchApiClient) {
      this.watchApiClient = watchApiClient;
      return this;
    }

    /**
     * @param fitter the fitter of the Filter and of the re-fit under the lock (default {@code
     *     PodFitter.create(registry)}: HAMi's {@code spread} device and {@code binpack} node
     *     policies; {@code HamiSchedulerFlags.podFitter} gives the flags' policies)
     * @return this builder
     */
    public Builder fitter(PodFitter fitter) {
      this.fitter = fitter;
      return this;
    }

    /**
     * HAMi's scheduler flags: their lock settings ({@link HamiSchedulerFlags#lockSettings()}: retry
     * policy and resolved lock timeout; the default request timeout follows from the retry policy)
     * and, unless {@link #fitter} is set, their node and GPU policies ({@link
     * HamiSchedulerFlags#podFitter}).
     *
     * @param flags the parsed flags
     * @return this builder
     * @throws NullPointerException if {@code flags} is null
     */
    public Builder schedulerFlags(HamiSchedulerFlags flags) {
      LockSettings lock = flags.lockSettings();
      this.flags = flags;
      return retryPolicy(lock.retryPolicy()).lockTimeout(lock.lockTimeout());
    }

    /**
     * The flows' cluster ports (default: {@link KubernetesCluster} over the stack's client with the
     * settings' request timeout and attempts), e.g. a writer decorated to rate-limit its Warning
     * Events ({@link ForwardingCluster}).
     *
     * @param reader fresh reads (the bind flow and the hand-off read through it)
     * @param writer pod patches, Bindings and pod Warning Events
     * @return this builder
     * @throws NullPointerException naming a null argument
     */
    public Builder ports(ClusterReader reader, ClusterWriter writer) {
      this.reader = Objects.requireNonNull(reader, "reader");
      this.writer = Objects.requireNonNull(writer, "writer");
      return this;
    }

    /**
     * @param filterReader where the Filter reads its candidates (e.g. an informer cache over the
     *     fresh reads); default the fresh reads. The bind flow always reads fresh.
     * @return this builder
     */
    public Builder filterReader(ClusterReader filterReader) {
      this.filterReader = filterReader;
      return this;
    }

    /**
     * Builds the stack and starts the lock watches (if on).
     *
     * @return the stack; close it to stop the watches
     * @throws IllegalArgumentException naming the setting: any {@link LockStackSettings} rule, or a
     *     registry whose vendors name no lock key
     */
    public KubernetesHamiStack build() {
      LockStackSettings s = settings();
      VendorRegistry reg = registry != null ? registry : VendorRegistry.discover();
      TreeSet<String> keys = new TreeSet<>();
      reg.vendors().forEach(v -> v.nodeLockKey().ifPresent(keys::add));
      checkArgument(
          !keys.isEmpty(),
          "registry must contain a vendor with a node lock key; vendors: %s",
          reg.vendors().stream().map(DeviceVendor::commonWord).toList());
      StackPorts ports;
      if (reader != null) {
        ports = new StackPorts(reader, writer);
      } else {
        KubernetesCluster cluster =
            KubernetesCluster.builder(apiClient)
                .requestTimeout(s.requestTimeout())
                .maxAttempts(s.maxAttempts())
                .build();
        ports = new StackPorts(cluster, cluster);
      }
      LockBackend be =
          backend != null
              ? backend
              : KubernetesLockStack.nodeAnnotationBackend(
                  apiClient, s, KubernetesLockStack.nodeLockWatch(apiClient, watchApiClient, s));
      try {
        // one release feeder for every lock key (issue 16 item 8), keys added before it starts
        Map<String, NodeLock> locks = new TreeMap<>();
        for (String key : keys) {
          locks.put(key, be.nodeLock(s.lock().withKey(key)));
        }
        be.start();
        return new KubernetesHamiStack(reg, s.withKey(keys.first()), ports, locks, be, this);
      } catch (RuntimeException e) {
        be.close();
        throw e;
      }
    }
  }
}
