package dev.hamilock.benchmarks.convergence;

import dev.hamilock.reference.GoClientRateLimit;
import dev.hamilock.reference.HamiBindLocking;
import dev.hamilock.reference.HamiNodeLock;
import dev.hamilock.reference.NvidiaVendorLock;

/**
 * Baseline (a): HAMi's own algorithm, run by the faithful re-implementation in {@code
 * hami-reference} with its defaults (real sleeps, real jitter): {@link HamiBindLocking} (pod-group
 * members poll every fixed 100 ms for up to 28 s) over {@link HamiNodeLock} (GET, GET under the
 * per-node in-process mutex, merge patch with resourceVersion, inner backoff 5 × 100 ms ×2 jitter
 * 0.5; release GET + GET + merge patch). The device plugin releases through its own {@link
 * HamiNodeLock} ({@code releaseNodeLock(node, pod, false)}, owner-checked), as HAMi's plugin does
 * at the end of {@code Allocate}.
 */
public final class HamiPollingAlgorithm implements Algorithm {
  private final boolean throttled;

  /** (a): hami-reference sending unthrottled. */
  public HamiPollingAlgorithm() {
    this(false);
  }

  private HamiPollingAlgorithm(boolean throttled) {
    this.throttled = throttled;
  }

  /**
   * @return (a) with HAMi's deployed client rate limit ({@link GoClientRateLimit}, 5 QPS, burst 10)
   *     on each process's own new client: hami-reference as a default HAMi installation runs
   */
  public static HamiPollingAlgorithm withHamiClientRateLimit() {
    return new HamiPollingAlgorithm(true);
  }

  @Override
  public String key() {
    return throttled ? "hami-polling-qps5" : "hami-polling";
  }

  @Override
  public String label() {
    return throttled
        ? "(g) hami-reference polling, HAMi's client limit QPS 5, burst 10"
        : "(a) HAMi: lock + 100 ms pod-group polling";
  }

  private io.kubernetes.client.openapi.ApiClient client(ProcessContext process) {
    if (!throttled) {
      return process.client();
    }
    return GoClientRateLimit.install(
        process.emulator().newApiClient(java.time.Duration.ofSeconds(30)),
        GoClientRateLimit.HAMI_SCHEDULER_QPS,
        GoClientRateLimit.HAMI_SCHEDULER_BURST);
  }

  @Override
  public boolean ours() {
    return false;
  }

  @Override
  public Replica replica(ProcessContext process) {
    HamiNodeLock lock = HamiNodeLock.builder(client(process)).build();
    HamiBindLocking binding =
        HamiBindLocking.builder()
            .vendor(NvidiaVendorLock.VENDOR, new NvidiaVendorLock(lock))
            .retryTimeout(process.retryTimeout())
            .build();
    return new Replica() {
      @Override
      public void acquire(String node, GangPod pod) throws Exception {
        binding.acquireNodeLocks(node, pod.pod());
      }

      @Override
      public void release(String node, GangPod pod) {
        binding.releaseAllDevices(node, pod.pod());
      }

      @Override
      public void close() {
        binding.shutdown();
      }
    };
  }

  @Override
  public Plugin plugin(ProcessContext process) {
    HamiNodeLock lock = HamiNodeLock.builder(client(process)).build();
    return (node, pod, observedLockValue) ->
        lock.releaseNodeLock(node, pod.namespace(), pod.name(), false);
  }
}
