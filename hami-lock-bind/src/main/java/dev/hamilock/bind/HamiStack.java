package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.WatchedPods;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.store.LockBackend;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.core.watch.ListAndWatch;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.PodFitter;
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
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The client-neutral whole stack: HAMi's flows ({@link PodBinder}, {@link ExtenderFilter}, {@link
 * DevicePluginHandoff}) over one client's cluster ports and {@link LockBackend}, wired once from
 * core's {@link LockSettings}; a client supplies only its ports and backend ({@link
 * Builder#clientDefaults}). Inside: one node lock per lock key the vendors name (e.g. {@code
 * hami.io/mutex.lock}), all on the backend's one release feeder, and one gang-aware {@link
 * NodeLockAcquirer}; the flows are created once and shared.
 *
 * <p><b>After {@link #close()}</b> every flow refuses new work with a typed failure ({@code bind}
 * {@code FAILED}, the Filter {@code REJECTED}, a hand-off {@code ERROR}) at the reads every flow
 * starts with, so writes and lock releases of a bind in flight still go through. A read on an
 * interrupted thread stops with kind {@code INTERRUPTED}. Thread-safe.
 */
public class HamiStack implements HamiFlows, AutoCloseable {

  private final VendorRegistry registry;
  private final LockSettings settings;
  private final Map<String, NodeLock> locksByKey;
  private final StackPorts ports;
  private final StackPorts filterPorts;
  private final LockBackend backend;
  private final PodBinder podBinder;
  private final ExtenderFilter extenderFilter;
  private final ConcurrentMap<String, DevicePluginHandoff> handoffs = new ConcurrentHashMap<>();
  private final Optional<StackPodWatch> podWatch;

  private HamiStack(
      VendorRegistry registry,
      LockSettings settings,
      StackPorts ports,
      Map<String, NodeLock> locksByKey,
      LockBackend backend,
      Builder b) {
    this.registry = registry;
    this.settings = settings;
    this.ports = ports;
    this.backend = backend;
    this.filterPorts = ports.reading(b.filterReader != null ? b.filterReader : ports);
    this.locksByKey = Collections.unmodifiableMap(locksByKey);
    this.podWatch = Optional.ofNullable(b.podWatch).map(StackPodWatch::new);
    ClusterReader bindReader =
        podWatch
            .<ClusterReader>map(
                w -> ports.reading(w.pods.readingFirst(ports, b.podHedge, b.podWait)))
            .orElse(ports);
    PodBinder.Builder pb =
        PodBinder.builder(bindReader, ports, registry, this::nodeLock)
            .acquirer(NodeLockAcquirer.create(settings))
            .refitUnderLock(b.refitUnderLock)
            .clock(settings.clock());
    ExtenderFilter.Builder fb =
        ExtenderFilter.builder(filterPorts, registry).clock(settings.clock());
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

  /** A client facade's stack, taking over {@code built}'s flows, locks and backend. */
  protected HamiStack(HamiStack built) {
    this.registry = built.registry;
    this.settings = built.settings;
    this.locksByKey = built.locksByKey;
    this.ports = built.ports;
    this.filterPorts = built.filterPorts;
    this.backend = built.backend;
    this.podBinder = built.podBinder;
    this.extenderFilter = built.extenderFilter;
    this.podWatch = built.podWatch;
  }

  /**
   * @return a builder with core's {@link LockSettings#defaults()}, {@link
   *     VendorRegistry#discover()}, re-fit under the lock on, Filter annotations written
   */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public final VendorRegistry registry() {
    return registry;
  }

  /** {@return the lock settings every key's lock was built from (key: the first lock key)} */
  public LockSettings lockSettings() {
    return settings;
  }

  /** {@return the lock keys this stack holds locks for, sorted} */
  public List<String> lockKeys() {
    return List.copyOf(locksByKey.keySet());
  }

  @Override
  public PodBinder podBinder() {
    return podBinder;
  }

  @Override
  public ExtenderFilter extenderFilter() {
    return extenderFilter;
  }

  /** {@return the Filter's reader ({@link Builder#filterReader}) behind the stack's gate} */
  @Override
  public ClusterReader filterReader() {
    return filterPorts;
  }

  private NodeLock nodeLock(String key) {
    NodeLock l = locksByKey.get(key);
    checkArgument(l != null, "no node lock for key \"%s\"; this stack locks %s", key, lockKeys());
    return l;
  }

  /**
   * @param vendor the vendor's common word, e.g. {@code NVIDIA}
   * @return the vendor's hand-off, with its node lock (one instance per vendor)
   * @throws NullPointerException if {@code vendor} is null
   * @throws IllegalArgumentException naming the vendor if it is blank, not registered or names no
   *     lock key
   */
  public DevicePluginHandoff devicePluginHandoff(String vendor) {
    requireNonBlank(vendor, "vendor");
    DeviceVendor v = registry.vendor(vendor).orElse(null);
    checkArgument(
        v != null, "vendor \"%s\" is not registered; registered: %s", vendor, words(registry));
    checkArgument(
        v.nodeLockKey().isPresent(),
        "vendor %s names no node lock key, so its device plugin has no hand-off lock",
        vendor);
    NodeLock lock = nodeLock(v.nodeLockKey().get());
    return handoffs.computeIfAbsent(
        v.commonWord(), w -> DevicePluginHandoff.create(ports, ports, v, lock));
  }

  /**
   * {@return the bind's watched pods ({@link Builder#watchedPods}), with their counters of lists
   * answered and sent on}
   */
  public Optional<WatchedPods> watchedPods() {
    return podWatch.map(w -> w.pods);
  }

  /**
   * Waits until the backend's release feeder has listed the nodes and opened its stream, and the
   * {@link #watchedPods()} have listed the pods once (an extender's {@code /readyz}); without
   * either, true at once.
   *
   * @return true if ready within {@code timeout}; false on timeout or once closed
   * @throws InterruptedException if interrupted while waiting
   * @throws NullPointerException if {@code timeout} is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  public boolean awaitReady(Duration timeout) throws InterruptedException {
    checkArgument(!timeout.isNegative(), "timeout must not be negative: %s", timeout);
    if (ports.isClosed()) {
      return false;
    }
    long deadline = System.nanoTime() + timeout.toNanos(); // one for both waits
    Optional<ReleaseFeeder> watch = backend.releases();
    if (watch.isPresent() && !watch.get().awaitSynced(timeout)) {
      return false;
    }
    if (podWatch.isPresent() && !podWatch.get().awaitListed(deadline, ports::isClosed)) {
      return false;
    }
    return !ports.isClosed();
  }

  /**
   * @return the release feeder's state per lock key, sorted; every entry shows the one feeder's
   *     totals over all keys (do not sum); empty without a feeder
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
   * @param connected whether the watch stream is open now (waiters then wake on releases)
   * @param relists how many times the watch listed the nodes (1 after start; more after reconnects)
   * @param releases lock releases (value present to absent) the watch has seen, all keys
   */
  public record LockWatchState(String key, boolean connected, long relists, long releases) {}

  private static List<String> words(VendorRegistry registry) {
    return registry.vendors().stream().map(DeviceVendor::commonWord).toList();
  }

  /** {@return whether {@link #close()} was called} */
  public boolean isClosed() {
    return ports.isClosed();
  }

  /**
   * Refuses new flow calls (see the class comment) and closes the backend and the pod watch.
   * Idempotent.
   */
  @Override
  public void close() {
    ports.close();
    podWatch.ifPresent(StackPodWatch::close);
    backend.close();
  }

  /** {@return {@code HamiStack[vendors=…, lockKeys=…, refitUnderLock=…[, closed]]}} */
  @Override
  public String toString() {
    return "%s[vendors=%s, lockKeys=%s, refitUnderLock=%s%s]"
        .formatted(
            getClass().getSimpleName(),
            words(registry),
            locksByKey.keySet(),
            podBinder.refitUnderLock(),
            ports.isClosed() ? ", closed" : "");
  }

  /** Core's {@link LockSettings} setters (the key is each vendor's) plus the stack's own. */
  public static final class Builder extends LockSettings.Configurer<Builder> {
    private VendorRegistry registry;
    private boolean refitUnderLock = true;
    private boolean writeFilterAnnotations = true;
    private PodFitter fitter;
    private HamiSchedulerFlags flags;
    private LockBackend backend;
    private Function<LockSettings, LockBackend> defaultBackend;
    private ClusterReader reader;
    private ClusterWriter writer;
    private Supplier<StackPorts> defaultPorts;
    private ClusterReader filterReader;
    private ListAndWatch.Transport podWatch;
    private Duration podHedge;
    private Duration podWait;

    private Builder() {}

    @Override
    protected Builder self() {
      return this;
    }

    /** {@code registry}: the enabled vendors (default {@link VendorRegistry#discover()}). */
    public Builder registry(VendorRegistry registry) {
      this.registry = registry;
      return this;
    }

    /**
     * @param on re-check and re-fit the allocation under the node lock (default true); false trusts
     *     the Filter's annotations as HAMi does and can over-commit GPUs
     */
    public Builder refitUnderLock(boolean on) {
      this.refitUnderLock = on;
      return this;
    }

    /** Whether the Filter writes HAMi's Filter annotations (default true, as HAMi's). */
    public Builder writeFilterAnnotations(boolean on) {
      this.writeFilterAnnotations = on;
      return this;
    }

    /** The Filter's and re-fit's fitter (default {@code PodFitter.create(registry)}). */
    public Builder fitter(PodFitter fitter) {
      this.fitter = fitter;
      return this;
    }

    /**
     * HAMi's flags: their retry policy and lock timeout and, unless {@link #fitter} is set, their
     * policies.
     *
     * @throws NullPointerException if {@code flags} is null
     */
    public Builder schedulerFlags(HamiSchedulerFlags flags) {
      LockSettings lock = flags.lockSettings();
      this.flags = flags;
      return retryPolicy(lock.retryPolicy()).lockTimeout(lock.lockTimeout());
    }

    /** A backend ({@code null}: the client's default) the stack then starts and closes. */
    public Builder backend(LockBackend backend) {
      this.backend = backend;
      return this;
    }

    /**
     * The flows' ports instead of the client's default (e.g. {@link
     * dev.hamilock.bind.cluster.ForwardingCluster} decorators).
     *
     * @throws NullPointerException naming a null argument
     */
    public Builder ports(ClusterReader reader, ClusterWriter writer) {
      this.reader = Objects.requireNonNull(reader, "reader");
      this.writer = Objects.requireNonNull(writer, "writer");
      return this;
    }

    /**
     * The bind's re-fit under the node lock reads the node's pods from one watch of all pods
     * through {@code transport} ({@link WatchedPods}; issue 25): once the watch holds the version
     * the bind's allocation PATCH returned, no pod LIST is sent; it waits {@code hedge} for that,
     * then also LISTs and takes the first answer, {@code wait} at most. The watch starts with the
     * stack and stops at {@link HamiStack#close()}; it keeps the cluster's pods with {@code
     * hami.io/vgpu-node} in memory. Default: none, the bind LISTs.
     *
     * @param transport the client's, e.g. {@code KubeWatchTransport.create(apiClient,
     *     Duration.ofSeconds(10))} or {@code Fabric8WatchTransport.create(client)}
     * @param hedge e.g. 5 ms (the runnable extender's); not negative
     * @param wait e.g. 100 ms; at least {@code hedge}
     * @throws NullPointerException naming a null argument
     * @throws IllegalArgumentException if the durations are negative or out of order
     */
    public Builder watchedPods(ListAndWatch.Transport transport, Duration hedge, Duration wait) {
      Objects.requireNonNull(hedge, "hedge");
      Objects.requireNonNull(wait, "wait");
      checkArgument(
          !hedge.isNegative() && wait.compareTo(hedge) >= 0,
          "need 0 <= hedge <= wait: hedge %s, wait %s",
          hedge,
          wait);
      this.podWatch = Objects.requireNonNull(transport, "transport");
      this.podHedge = hedge;
      this.podWait = wait;
      return this;
    }

    /** Where the Filter reads (e.g. an informer cache; default fresh); binds read fresh. */
    public Builder filterReader(ClusterReader filterReader) {
      this.filterReader = filterReader;
      return this;
    }

    /**
     * A client adapter's ports and backend, made at {@link #build()} unless {@link #ports} or
     * {@link #backend} set one.
     *
     * @throws NullPointerException naming a null argument
     */
    public <C extends ClusterReader & ClusterWriter> Builder clientDefaults(
        Supplier<C> ports, Function<LockSettings, LockBackend> backend) {
      Objects.requireNonNull(ports, "ports");
      this.defaultPorts =
          () -> {
            C c = ports.get();
            return new StackPorts(c, c);
          };
      this.defaultBackend = Objects.requireNonNull(backend, "backend");
      return this;
    }

    /**
     * Builds the stack and starts the backend's release feeder (keys added first).
     *
     * @throws IllegalArgumentException naming the setting: any {@link LockSettings} rule, a
     *     registry whose vendors name no lock key
     * @throws NullPointerException if neither the ports nor the backend nor {@link #clientDefaults}
     *     were given
     */
    public HamiStack build() {
      LockSettings s = lockSettings();
      VendorRegistry reg = registry != null ? registry : VendorRegistry.discover();
      TreeSet<String> keys = new TreeSet<>();
      reg.vendors().forEach(v -> v.nodeLockKey().ifPresent(keys::add));
      checkArgument(
          !keys.isEmpty(),
          "registry must contain a vendor with a node lock key; vendors: %s; put a vendor such as"
              + " dev.hamilock:hami-device-nvidia on the class path (ServiceLoader finds it) or"
              + " give registry(...) one",
          words(reg));
      StackPorts ports =
          reader != null
              ? new StackPorts(reader, writer)
              : Objects.requireNonNull(defaultPorts, "ports or clientDefaults").get();
      LockBackend be =
          backend != null
              ? backend
              : Objects.requireNonNull(defaultBackend, "backend or clientDefaults").apply(s);
      try {
        // one release feeder for every lock key, keys added before it starts
        Map<String, NodeLock> locks = new TreeMap<>();
        for (String key : keys) {
          locks.put(key, be.nodeLock(s.withKey(key)));
        }
        be.start();
        HamiStack stack = new HamiStack(reg, s.withKey(keys.first()), ports, locks, be, this);
        stack.podWatch.ifPresent(StackPodWatch::start);
        return stack;
      } catch (RuntimeException e) {
        be.close();
        throw e;
      }
    }
  }
}
