package dev.hamilock.k8s.bind;

import dev.hamilock.bind.DevicePluginHandoff;
import dev.hamilock.bind.ExtenderFilter;
import dev.hamilock.bind.NodeLocks;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.k8s.KubernetesNodeLocks;
import dev.hamilock.k8s.internal.Validation;
import dev.hamilock.k8s.watch.NodeLockWatch;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The whole hami-lock stack for one {@link ApiClient}, wired once: the {@link KubernetesCluster}
 * ports, one {@link KubernetesNodeLocks} (annotation lock on Node objects with its release watch)
 * per lock key the registry's vendors name ({@code DeviceVendor.nodeLockKey()}, e.g.
 * {@code hami.io/mutex.lock} for NVIDIA), and on top of them HAMi's flows:
 * <ul>
 *   <li>{@link #podBinder()}: the scheduler-extender Bind with re-fit under the node lock
 *       ({@code pkg/scheduler/scheduler.go} Bind, spec §2.3, §3.4);</li>
 *   <li>{@link #extenderFilter()}: the extender Filter on fresh usage (spec §2.2);</li>
 *   <li>{@link #devicePluginHandoff(String)}: a device plugin's side of the bind → Allocate
 *       hand-off ({@code pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go}, spec §3).</li>
 * </ul>
 *
 * <pre>{@code
 * ApiClient client = Config.defaultClient();
 * try (KubernetesHami hami = KubernetesHami.builder(client).build()) {   // VendorRegistry.discover()
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
 * <p>The flows are created once and shared (all are thread-safe); the hand-off of a vendor is one
 * instance, so its calls are serialized as HAMi's plugin-wide mutex serializes Allocate.
 * {@link #close()} stops the node watch. Thread-safe.
 */
public final class KubernetesHami implements AutoCloseable {

  private final VendorRegistry registry;
  private final KubernetesCluster cluster;
  private final Map<String, KubernetesNodeLocks> locksByKey;
  private final NodeLocks nodeLocks;
  private final Optional<NodeLockWatch> nodeWatch;
  private final PodBinder podBinder;
  private final ExtenderFilter extenderFilter;
  private final ConcurrentMap<String, DevicePluginHandoff> handoffs = new ConcurrentHashMap<>();

  private KubernetesHami(VendorRegistry registry, KubernetesCluster cluster, Map<String, KubernetesNodeLocks> locksByKey,
      Optional<NodeLockWatch> nodeWatch, Builder b) {
    this.registry = registry;
    this.nodeWatch = nodeWatch;
    this.cluster = cluster;
    this.locksByKey = Collections.unmodifiableMap(locksByKey);
    this.nodeLocks = key -> {
      KubernetesNodeLocks l = locksByKey.get(key);
      if (l == null) {
        throw new IllegalArgumentException("no node lock for key \"" + key + "\"; this stack locks " + locksByKey.keySet());
      }
      return l.nodeLock();
    };
    PodBinder.Builder pb = PodBinder.builder(cluster, cluster, registry, nodeLocks)
        .retryPolicy(b.retryPolicy)
        .refitUnderLock(b.refitUnderLock)
        .clock(b.clock);
    ExtenderFilter.Builder fb = ExtenderFilter.builder(cluster, registry).clock(b.clock);
    if (b.fitter != null) {
      pb.fitter(b.fitter);
      fb.fitter(b.fitter);
    }
    if (b.writeFilterAnnotations) {
      fb.writeAnnotations(cluster);
    } else {
      fb.writer(cluster);
    }
    this.podBinder = pb.build();
    this.extenderFilter = fb.build();
  }

  /**
   * @param apiClient the configured client (base path, credentials); request timeouts are applied
   *     per call, so its own read timeout does not matter
   * @return a builder with: {@link VendorRegistry#discover()}, HAMi's retry policy (100 ms poll,
   *     28 s, extender HTTP timeout 30 s), re-fit under the lock on, Filter annotations written,
   *     request timeout 10 s, 5 read attempts, lock timeout from {@code HAMI_NODELOCK_EXPIRE} or
   *     5 min, release watch on, system UTC clock
   * @throws IllegalArgumentException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    if (apiClient == null) {
      throw new IllegalArgumentException("apiClient must not be null");
    }
    return new Builder(apiClient);
  }

  /** @return the enabled device vendors */
  public VendorRegistry registry() {
    return registry;
  }

  /** @return the cluster ports (fresh reads, merge patches, bindings) */
  public KubernetesCluster cluster() {
    return cluster;
  }

  /**
   * @return the node lock of each lock key of the registry's vendors; {@code forKey} of any other
   *     key throws {@link IllegalArgumentException} naming it
   */
  public NodeLocks nodeLocks() {
    return nodeLocks;
  }

  /**
   * @return the one node watch that serves every lock key of this stack (issue 16 item 8), empty if
   *     the watch is off
   */
  public Optional<NodeLockWatch> nodeWatch() {
    return nodeWatch;
  }

  /**
   * @param key a lock key, e.g. {@code hami.io/mutex.lock}
   * @return that key's lock stack (lock, gang-aware acquirer, store, watch), if a vendor needs it
   */
  public Optional<KubernetesNodeLocks> lockStack(String key) {
    return Optional.ofNullable(locksByKey.get(key));
  }

  /** @return the lock keys this stack holds locks for, sorted */
  public List<String> lockKeys() {
    return List.copyOf(locksByKey.keySet());
  }

  /** @return the bind flow (one shared, thread-safe instance) */
  public PodBinder podBinder() {
    return podBinder;
  }

  /** @return the extender filter step (one shared, thread-safe instance) */
  public ExtenderFilter extenderFilter() {
    return extenderFilter;
  }

  /**
   * The device-plugin hand-off of one vendor, with that vendor's node lock.
   *
   * @param vendor the vendor's common word, e.g. {@code NVIDIA}
   * @return the hand-off (the same instance for the same vendor)
   * @throws IllegalArgumentException naming the vendor if it is not registered or names no lock key
   */
  public DevicePluginHandoff devicePluginHandoff(String vendor) {
    if (vendor == null || vendor.isBlank()) {
      throw new IllegalArgumentException("vendor must not be null or blank: \"" + vendor + "\"");
    }
    DeviceVendor v = registry.vendor(vendor).orElseThrow(() -> new IllegalArgumentException(
        "vendor \"" + vendor + "\" is not registered; registered: "
            + registry.vendors().stream().map(DeviceVendor::commonWord).toList()));
    String key = v.nodeLockKey().orElseThrow(() -> new IllegalArgumentException(
        "vendor " + vendor + " names no node lock key, so its device plugin has no hand-off lock"));
    NodeLock lock = nodeLocks.forKey(key);
    return handoffs.computeIfAbsent(v.commonWord(), w -> DevicePluginHandoff.create(cluster, cluster, v, lock));
  }

  /** Stops the node watch. Idempotent. */
  @Override
  public void close() {
    locksByKey.values().forEach(KubernetesNodeLocks::close);
    nodeWatch.ifPresent(NodeLockWatch::close);
  }

  @Override
  public String toString() {
    return "KubernetesHami[vendors=" + registry.vendors().stream().map(DeviceVendor::commonWord).toList()
        + ", lockKeys=" + locksByKey.keySet() + ", refitUnderLock=" + podBinder.refitUnderLock() + "]";
  }

  /** Validating builder for {@link KubernetesHami}. Not thread-safe. */
  public static final class Builder {
    private final ApiClient apiClient;
    private ApiClient watchApiClient;
    private dev.hamilock.core.NodeLockListener nodeLockListener = dev.hamilock.core.NodeLockListener.NOOP;
    private VendorRegistry registry;
    private RetryPolicy retryPolicy = RetryPolicy.defaults();
    private boolean refitUnderLock = true;
    private boolean writeFilterAnnotations = true;
    private Duration requestTimeout = KubernetesCluster.DEFAULT_REQUEST_TIMEOUT;
    private int maxAttempts = KubernetesCluster.DEFAULT_MAX_ATTEMPTS;
    private Duration lockTimeout;
    private boolean watch = true;
    private InstantSource clock = Clock.systemUTC();
    private PodFitter fitter;

    private Builder(ApiClient apiClient) {
      this.apiClient = apiClient;
    }

    /**
     * @param registry the enabled vendors (default {@link VendorRegistry#discover()}: every
     *     {@code DeviceVendor} on the class or module path)
     * @return this builder
     */
    public Builder registry(VendorRegistry registry) {
      this.registry = registry;
      return this;
    }

    /**
     * @param retryPolicy gang members' lock retries (HAMi {@code --node-lock-retry-timeout};
     *     default 100 ms poll, 28 s)
     * @return this builder
     */
    public Builder retryPolicy(RetryPolicy retryPolicy) {
      this.retryPolicy = retryPolicy;
      return this;
    }

    /**
     * @param on re-check and re-fit the allocation under the node lock (default true); false
     *     trusts the Filter's annotations as HAMi does and can over-commit GPUs
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
     * @param requestTimeout whole-call timeout of every API request (default 10 s); positive and
     *     below the retry policy's extender HTTP timeout
     * @return this builder
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    /**
     * @param maxAttempts attempts of reads and lock operations on transient failures (default 5); 1..100
     * @return this builder
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * @param lockTimeout node lock expiry overriding {@code HAMI_NODELOCK_EXPIRE} (HAMi
     *     {@code --node-lock-timeout}, default 5 min); positive
     * @return this builder
     */
    public Builder lockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
      return this;
    }

    /**
     * @param on whether the stack runs its node watch (one for every lock key) that wakes waiting
     *     gang members on release (default true); without it waiters poll
     * @return this builder
     */
    public Builder watch(boolean on) {
      this.watch = on;
      return this;
    }

    /**
     * @param listener lock events of every vendor's node lock: acquisitions, contention, releases,
     *     takeovers ({@code KubernetesNodeLocks.Builder#listener}; e.g. hami-lock-micrometer's
     *     meters or Kubernetes Events); default none. A listener that may throw should be wrapped
     *     with {@link dev.hamilock.core.NodeLockListener#guarded}
     * @return this builder
     * @throws IllegalArgumentException if {@code listener} is null
     */
    public Builder nodeLockEvents(dev.hamilock.core.NodeLockListener listener) {
      if (listener == null) {
        throw new IllegalArgumentException("listener must not be null");
      }
      this.nodeLockListener = listener;
      return this;
    }

    /**
     * @param watchApiClient client for the node watch (default derived from the main client,
     *     without read timeout)
     * @return this builder
     */
    public Builder watchApiClient(ApiClient watchApiClient) {
      this.watchApiClient = watchApiClient;
      return this;
    }

    /**
     * @param clock source of lock timestamps, {@code hami.io/vgpu-time}, {@code hami.io/bind-time}
     *     (Unix seconds) and step durations (default system UTC)
     * @return this builder
     */
    public Builder clock(InstantSource clock) {
      this.clock = clock;
      return this;
    }

    /**
     * @param fitter the fitter of the Filter and of the re-fit under the lock (default
     *     {@code PodFitter.create(registry)}: HAMi's {@code spread} device and {@code binpack} node
     *     policies)
     * @return this builder
     */
    public Builder fitter(PodFitter fitter) {
      this.fitter = fitter;
      return this;
    }

    /**
     * Builds the stack and starts the node watch (if on).
     *
     * @return the stack; close it to stop the watches
     * @throws IllegalArgumentException naming the setting: null retry policy or clock, request
     *     timeout not positive or not below the extender HTTP timeout, maxAttempts outside
     *     1..100, non-positive lock timeout, or a registry whose vendors name no lock key
     */
    public KubernetesHami build() {
      if (retryPolicy == null) {
        throw new IllegalArgumentException("retryPolicy must not be null");
      }
      if (clock == null) {
        throw new IllegalArgumentException("clock must not be null");
      }
      Validation.positive("requestTimeout", requestTimeout);
      if (lockTimeout != null) {
        Validation.positive("lockTimeout", lockTimeout);
      }
      VendorRegistry reg = registry != null ? registry : VendorRegistry.discover();
      TreeMap<String, Boolean> keys = new TreeMap<>();
      reg.vendors().forEach(v -> v.nodeLockKey().ifPresent(k -> keys.put(k, true)));
      if (keys.isEmpty()) {
        throw new IllegalArgumentException("registry must contain a vendor with a node lock key; vendors: "
            + reg.vendors().stream().map(DeviceVendor::commonWord).toList());
      }
      KubernetesCluster cluster = KubernetesCluster.builder(apiClient).requestTimeout(requestTimeout)
          .maxAttempts(maxAttempts).build();
      Map<String, KubernetesNodeLocks> locks = new TreeMap<>();
      List<KubernetesNodeLocks> started = new ArrayList<>();
      // one node watch for every lock key (issue 16 item 8), keys added before it starts
      NodeLockWatch shared = null;
      if (watch) {
        NodeLockWatch.Builder wb = NodeLockWatch.builder(apiClient).requestTimeout(requestTimeout);
        if (watchApiClient != null) {
          wb.watchApiClient(watchApiClient);
        }
        shared = wb.build();
      }
      try {
        for (String key : keys.keySet()) {
          KubernetesNodeLocks.Builder lb = KubernetesNodeLocks.builder(apiClient).key(key).retryPolicy(retryPolicy)
              .requestTimeout(requestTimeout).maxAttempts(maxAttempts).watch(watch).nodeWatch(shared).clock(clock)
              .listener(nodeLockListener);
          if (lockTimeout != null) {
            lb.lockTimeout(lockTimeout);
          }
          if (watchApiClient != null) {
            lb.watchApiClient(watchApiClient);
          }
          KubernetesNodeLocks l = lb.build();
          started.add(l);
          locks.put(key, l);
        }
        if (shared != null) {
          shared.start();
        }
        return new KubernetesHami(reg, cluster, locks, Optional.ofNullable(shared), this);
      } catch (RuntimeException e) {
        started.forEach(KubernetesNodeLocks::close);
        if (shared != null) {
          shared.close();
        }
        throw e;
      }
    }
  }
}
