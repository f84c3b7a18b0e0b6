package dev.hamilock.reference;

import static com.google.common.base.Preconditions.checkArgument;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Faithful Java re-implementation of the lock part of HAMi's extender Bind ({@code
 * pkg/scheduler/scheduler.go} {@code acquireNodeLocks}, {@code lockAllDevices}, {@code
 * releaseAllDevices}; {@code pkg/util/util.go} {@code IsPodGroupMember}; spec §1.11, §1.12, §2.3).
 *
 * <ul>
 *   <li>{@link #lockAllDevices}: every registered vendor in byte order of its key; on the first
 *       failure the already-locked vendors are released in reverse order (release errors only
 *       logged) and the original error is rethrown; later vendors are not called.
 *   <li>{@link #acquireNodeLocks}: non-members of a pod group, or a retry timeout ≤ 0, get one
 *       {@code lockAllDevices}; members poll every fixed 100 ms (no backoff, no jitter) until the
 *       deadline, which is checked after each attempt; non-contention errors are thrown at once.
 *   <li>{@link #releaseAllDevices}: Bind's fail path, every vendor in order, errors logged.
 * </ul>
 *
 * <p>Thread-safe; {@link #shutdown()} plays closing the scheduler's stop channel.
 */
public final class HamiBindLocking {

  /** scheduler-plugins coscheduling pod-group label. */
  public static final String POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group";

  /** HAMi's {@code --node-lock-retry-timeout} default. */
  public static final Duration DEFAULT_RETRY_TIMEOUT = Duration.ofSeconds(28);

  /** HAMi's fixed poll interval between pod-group attempts. */
  public static final Duration POLL_INTERVAL = Duration.ofMillis(100);

  private static final Logger LOG = LoggerFactory.getLogger(HamiBindLocking.class);

  private final NavigableMap<String, VendorLock> vendors;
  private final Duration retryTimeout;
  private final Duration pollInterval;
  private final LongSupplier nanoTime;
  private final Optional<Sleeper> sleeper;
  private final CountDownLatch stop = new CountDownLatch(1);
  private final AtomicLong lockAllDevicesCalls = new AtomicLong();
  private final AtomicLong vendorLockCalls = new AtomicLong();
  private final AtomicLong vendorReleaseCalls = new AtomicLong();

  private HamiBindLocking(Builder b) {
    this.vendors = Collections.unmodifiableNavigableMap(new TreeMap<>(b.vendors));
    this.retryTimeout = b.retryTimeout;
    this.pollInterval = b.pollInterval;
    this.nanoTime = b.nanoTime;
    this.sleeper = b.sleeper;
  }

  /**
   * @return a builder with no vendors, retry timeout 28 s, poll 100 ms, real time
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * HAMi's {@code IsPodGroupMember}: label {@code scheduling.x-k8s.io/pod-group} has a non-empty
   * value, or {@code spec.schedulingGroup.podGroupName} is non-empty.
   *
   * @param pod the pod, may be {@code null} (then {@code false})
   * @return whether the pod belongs to a pod group
   */
  public static boolean isPodGroupMember(V1Pod pod) {
    if (pod == null) {
      return false;
    }
    Map<String, String> labels = pod.getMetadata() == null ? null : pod.getMetadata().getLabels();
    if (labels != null) {
      String group = labels.get(POD_GROUP_LABEL);
      if (group != null && !group.isEmpty()) {
        return true;
      }
    }
    if (pod.getSpec() != null && pod.getSpec().getSchedulingGroup() != null) {
      String name = pod.getSpec().getSchedulingGroup().getPodGroupName();
      return name != null && !name.isEmpty();
    }
    return false;
  }

  /**
   * HAMi's {@code acquireNodeLocks(node, pod)}.
   *
   * @param node node name
   * @param pod the pod being bound
   * @throws HamiLockContentionException {@code timed out after <timeout> waiting for node <node> to
   *     be unlocked: node lock contention} or {@code scheduler shutting down while waiting for node
   *     lock: node lock contention} (on {@link #shutdown()} or thread interruption, the interrupt
   *     flag then restored)
   * @throws HamiException a vendor's error, thrown unchanged (contention included, for non-members)
   * @throws ApiException a vendor's API error, thrown unchanged
   */
  public void acquireNodeLocks(String node, V1Pod pod) throws ApiException, HamiException {
    HamiNodeLock.requireArg(node, "node");
    if (!isPodGroupMember(pod) || retryTimeout.isZero() || retryTimeout.isNegative()) {
      lockAllDevices(node, pod);
      return;
    }
    long deadline = nanoTime.getAsLong() + retryTimeout.toNanos();
    while (true) {
      try {
        lockAllDevices(node, pod);
        return;
      } catch (ApiException e) {
        throw e;
      } catch (HamiException e) {
        if (!HamiLockContentionException.isContention(e)) {
          throw e;
        }
      }
      if (nanoTime.getAsLong() - deadline > 0) {
        throw new HamiLockContentionException(
            "timed out after "
                + GoFormats.duration(retryTimeout)
                + " waiting for node "
                + node
                + " to be unlocked");
      }
      boolean stopped;
      try {
        stopped = awaitStop();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        stopped = true;
      }
      if (stopped) {
        throw new HamiLockContentionException(
            "scheduler shutting down while waiting for node lock");
      }
    }
  }

  /**
   * HAMi's {@code lockAllDevices(node, pod)}: vendors in key order, reverse-order rollback on the
   * first failure, the original error rethrown.
   *
   * @param node node name
   * @param pod the pod being bound
   * @throws HamiException the failing vendor's HAMi error
   * @throws ApiException the failing vendor's API error
   */
  public void lockAllDevices(String node, V1Pod pod) throws ApiException, HamiException {
    lockAllDevicesCalls.incrementAndGet();
    List<Map.Entry<String, VendorLock>> acquired = new ArrayList<>(vendors.size());
    for (Map.Entry<String, VendorLock> vendor : vendors.entrySet()) {
      try {
        vendorLockCalls.incrementAndGet();
        vendor.getValue().lockNode(node, pod);
      } catch (ApiException | HamiException e) {
        for (int i = acquired.size() - 1; i >= 0; i--) {
          release(acquired.get(i), node, pod, "rollback");
        }
        throw e;
      }
      acquired.add(vendor);
    }
  }

  /**
   * HAMi's {@code releaseAllDevices(node, pod)} (Bind's fail path): every vendor's owner-checked
   * release in key order; errors are logged, never thrown.
   *
   * @param node node name
   * @param pod the pod whose locks are released
   */
  public void releaseAllDevices(String node, V1Pod pod) {
    for (Map.Entry<String, VendorLock> vendor : vendors.entrySet()) {
      release(vendor, node, pod, "bind failure");
    }
  }

  /** Plays closing HAMi's scheduler stop channel: pending and future pod-group waits end. */
  public void shutdown() {
    stop.countDown();
  }

  /**
   * @return number of {@link #lockAllDevices} calls so far (one per pod-group attempt)
   */
  public long lockAllDevicesCalls() {
    return lockAllDevicesCalls.get();
  }

  /**
   * @return number of vendor {@code LockNode} calls so far
   */
  public long vendorLockCalls() {
    return vendorLockCalls.get();
  }

  /**
   * @return number of vendor {@code ReleaseNodeLock} calls so far (rollbacks and releaseAllDevices)
   */
  public long vendorReleaseCalls() {
    return vendorReleaseCalls.get();
  }

  /**
   * @return the registered vendor keys in the order HAMi calls them
   */
  public List<String> vendorOrder() {
    return List.copyOf(vendors.keySet());
  }

  private void release(Map.Entry<String, VendorLock> vendor, String node, V1Pod pod, String why) {
    vendorReleaseCalls.incrementAndGet();
    try {
      vendor.getValue().releaseNodeLock(node, pod);
    } catch (ApiException | HamiException e) {
      LOG.warn(
          "Failed to release node lock ({}): vendor={} node={} error={}",
          why,
          vendor.getKey(),
          node,
          GoFormats.errorText(e));
    }
  }

  private boolean awaitStop() throws InterruptedException {
    if (sleeper.isEmpty()) {
      return stop.await(pollInterval.toNanos(), TimeUnit.NANOSECONDS);
    }
    if (stop.getCount() == 0) {
      return true;
    }
    sleeper.get().sleep(pollInterval);
    return stop.getCount() == 0;
  }

  /** Validating builder for {@link HamiBindLocking}. */
  public static final class Builder {
    private final Map<String, VendorLock> vendors = new TreeMap<>();
    private Duration retryTimeout = DEFAULT_RETRY_TIMEOUT;
    private Duration pollInterval = POLL_INTERVAL;
    private LongSupplier nanoTime = System::nanoTime;
    private Optional<Sleeper> sleeper = Optional.empty();

    private Builder() {}

    /**
     * Registers a vendor (HAMi's {@code device.GetDevices()} entry).
     *
     * @param key the vendor key ({@code CommonWord}, e.g. {@code NVIDIA}); order of calls is key
     *     order
     * @param lock the vendor's lock methods
     * @return this builder
     * @throws NullPointerException if the key or the lock is null
     * @throws IllegalArgumentException if the key is empty or already registered
     */
    public Builder vendor(String key, VendorLock lock) {
      HamiNodeLock.requireArg(key, "key");
      Objects.requireNonNull(lock, "lock");
      checkArgument(vendors.putIfAbsent(key, lock) == null, "vendor %s is already registered", key);
      return this;
    }

    /**
     * @param retryTimeout {@code --node-lock-retry-timeout} (default 28 s; zero or negative
     *     disables the retry)
     * @return this builder
     * @throws NullPointerException if null
     */
    public Builder retryTimeout(Duration retryTimeout) {
      this.retryTimeout = Objects.requireNonNull(retryTimeout, "retryTimeout");
      return this;
    }

    /**
     * @param pollInterval wait between pod-group attempts; HAMi hard-codes 100 ms (change only to
     *     run time-scaled benchmarks, and say so)
     * @return this builder
     * @throws NullPointerException if null
     * @throws IllegalArgumentException if zero or negative
     */
    public Builder pollInterval(Duration pollInterval) {
      Objects.requireNonNull(pollInterval, "pollInterval");
      checkArgument(
          !pollInterval.isZero() && !pollInterval.isNegative(),
          "pollInterval must be positive, got %s",
          pollInterval);
      this.pollInterval = pollInterval;
      return this;
    }

    /**
     * Virtual time for tests: the deadline is read from {@code nanoTime} and waits go through
     * {@code sleeper} (which should advance {@code nanoTime}); {@link #shutdown()} is then observed
     * after each wait.
     *
     * @param nanoTime monotonic nanosecond source (Go's monotonic {@code time.Now()})
     * @param sleeper how to wait one poll interval
     * @return this builder
     * @throws NullPointerException if either is null
     */
    public Builder virtualTime(LongSupplier nanoTime, Sleeper sleeper) {
      Objects.requireNonNull(nanoTime, "nanoTime");
      Objects.requireNonNull(sleeper, "sleeper");
      this.nanoTime = nanoTime;
      this.sleeper = Optional.of(sleeper);
      return this;
    }

    /**
     * @return the configured bind locking
     */
    public HamiBindLocking build() {
      return new HamiBindLocking(this);
    }
  }
}
