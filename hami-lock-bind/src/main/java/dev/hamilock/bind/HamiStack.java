package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.store.LockBackend;
import dev.hamilock.core.store.ReleaseFeeder;
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
 * The client-neutral whole stack: HAMi's flows ({@link #podBinder()}: the extender Bind with re-fit
 * under the node lock, HAMi {@code pkg/scheduler/scheduler.go} Bind, spec §2.3, §3.4; {@link
 * #extenderFilter()}: the Filter on fresh usage, spec §2.2; {@link #devicePluginHandoff(String)}:
 * the device plugin's side of the bind → Allocate hand-off, {@code
 * pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go}, spec §3) over one client's cluster
 * ports and {@link LockBackend}, wired once from core's {@link LockSettings}. A client supplies
 * only its ports and backend ({@link Builder#clientDefaults}): fabric8's {@code Fabric8HamiStack}
 * builds this class, client-java's {@code KubernetesHamiStack} is one with its own settings.
 *
 * <p>Inside: one node lock per lock key the vendors name ({@code DeviceVendor.nodeLockKey()}, e.g.
 * {@code hami.io/mutex.lock}), all on the backend's one release feeder, and ONE gang-aware {@link
 * NodeLockAcquirer}. The flows are created once and shared (a vendor's hand-off is one instance).
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
    PodBinder.Builder pb =
        PodBinder.builder(ports, ports, registry, this::nodeLock)
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

  /**
   * A client facade's stack: the same flows, locks and backend as {@code built} (which it takes
   * over; use only the new instance).
   *
   * @param built the stack {@link Builder#build()} made
   */
  protected HamiStack(HamiStack built) {
    this.registry = built.registry;
    this.settings = built.settings;
    this.locksByKey = built.locksByKey;
    this.ports = built.ports;
    this.filterPorts = built.filterPorts;
    this.backend = built.backend;
    this.podBinder = built.podBinder;
    this.extenderFilter = built.extenderFilter;
  }

  /**
   * @return a builder with core's {@link LockSettings#defaults()} (lock timeout explicit &gt;
   *     {@code HAMI_NODELOCK_EXPIRE} &gt; 5 min, HAMi's retry policy 100 ms / 28 s), {@link
   *     VendorRegistry#discover()}, re-fit under the lock on, Filter annotations written; the
   *     client's ports and backend come from {@link Builder#clientDefaults} or {@link
   *     Builder#ports}/{@link Builder#backend}
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

  /**
   * @return the Filter's reader ({@link Builder#filterReader}, default the fresh reads) behind the
   *     stack's gate (refuses reads after {@link #close()} or on an interrupted thread)
   */
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
   * Waits until the backend's release feeder has listed the nodes and opened its stream, so waiting
   * gang members are woken by releases (what an extender's {@code /readyz} answers). Without a
   * feeder it returns true at once.
   *
   * @param timeout how long to wait in total; not negative
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
    Optional<ReleaseFeeder> watch = backend.releases();
    if (watch.isPresent() && !watch.get().awaitSynced(timeout)) {
      return false;
    }
    return !ports.isClosed();
  }

  /**
   * The release feeder's state per lock key, for health checks: every key shows the backend's one
   * feeder (its totals over all keys: do not sum entries).
   *
   * @return one entry per lock key, sorted by key; empty without a feeder
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
   * The shared release watch as of the call, for one lock key.
   *
   * @param key the lock key this entry is for
   * @param connected whether the watch stream is open now (waiters then wake on releases)
   * @param relists how many times the watch listed the nodes (1 after start; more after reconnects)
   * @param releases how many lock releases (value present to absent) the watch has seen, all keys
   */
  public record LockWatchState(String key, boolean connected, long relists, long releases) {}

  private static List<String> words(VendorRegistry registry) {
    return registry.vendors().stream().map(DeviceVendor::commonWord).toList();
  }

  /** {@return whether {@link #close()} was called} */
  public boolean isClosed() {
    return ports.isClosed();
  }

  /** Refuses new flow calls (see the class comment) and closes the backend. Idempotent. */
  @Override
  public void close() {
    ports.close();
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

  /**
   * Builder for {@link HamiStack}: core's {@link LockSettings} setters (inherited, declared once;
   * their {@code key} is replaced by each vendor's lock key) plus what only the whole stack has.
   * Not thread-safe.
   */
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

    private Builder() {}

    @Override
    protected Builder self() {
      return this;
    }

    /**
     * @param registry the enabled vendors (default {@link VendorRegistry#discover()}: every {@code
     *     DeviceVendor} on the class or module path)
     */
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

    /**
     * @param on whether {@link ExtenderFilter#filter} writes HAMi's Filter annotations on the
     *     chosen node (default true, as HAMi's Filter does, so other schedulers count the choice)
     */
    public Builder writeFilterAnnotations(boolean on) {
      this.writeFilterAnnotations = on;
      return this;
    }

    /**
     * @param fitter the fitter of the Filter and of the re-fit under the lock (default {@code
     *     PodFitter.create(registry)}: HAMi's {@code spread} device, {@code binpack} node policies)
     */
    public Builder fitter(PodFitter fitter) {
      this.fitter = fitter;
      return this;
    }

    /**
     * HAMi's scheduler flags: their lock settings ({@link HamiSchedulerFlags#lockSettings()}: retry
     * policy and resolved lock timeout) and, unless {@link #fitter} is set, their node and GPU
     * policies ({@link HamiSchedulerFlags#podFitter}).
     *
     * @throws NullPointerException if {@code flags} is null
     */
    public Builder schedulerFlags(HamiSchedulerFlags flags) {
      LockSettings lock = flags.lockSettings();
      this.flags = flags;
      return retryPolicy(lock.retryPolicy()).lockTimeout(lock.lockTimeout());
    }

    /**
     * Runs the locks on {@code backend} instead of the client's default. The stack owns it: it
     * creates every key's lock, then starts it, and closes it with the stack.
     *
     * @param backend the backend, or {@code null} for the client's default
     */
    public Builder backend(LockBackend backend) {
      this.backend = backend;
      return this;
    }

    /**
     * The flows' cluster ports instead of the client's default, e.g. a decorated writer ({@link
     * dev.hamilock.bind.cluster.ForwardingCluster}).
     *
     * @param reader fresh reads (the bind flow and the hand-off read through it)
     * @param writer pod patches, Bindings and pod Warning Events
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
     */
    public Builder filterReader(ClusterReader filterReader) {
      this.filterReader = filterReader;
      return this;
    }

    /**
     * What a client adapter supplies: its cluster ports and its lock backend, each made at {@link
     * #build()} only if {@link #ports} or {@link #backend} did not set one.
     *
     * @param <C> the client's one object implementing both ports
     * @param ports makes the client's ports
     * @param backend makes the client's backend from the resolved lock settings
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
     * @return the stack; close it to stop the feeder
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
        return new HamiStack(reg, s.withKey(keys.first()), ports, locks, be, this);
      } catch (RuntimeException e) {
        be.close();
        throw e;
      }
    }
  }
}
