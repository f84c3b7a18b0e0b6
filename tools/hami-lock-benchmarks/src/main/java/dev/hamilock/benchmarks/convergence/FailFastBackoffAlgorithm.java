package dev.hamilock.benchmarks.convergence;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.reference.HamiBindLocking;
import dev.hamilock.reference.HamiLockContentionException;
import dev.hamilock.reference.HamiNodeLock;
import dev.hamilock.reference.NvidiaVendorLock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Baseline (b): fail fast, re-queue with kube-scheduler's pod backoff. One {@link
 * HamiBindLocking#lockAllDevices} attempt with HAMi's lock (what HAMi does for pods outside a pod
 * group); a loser's bind fails and kube-scheduler retries it after its per-pod backoff: {@code
 * podInitialBackoffSeconds} 1 s doubling per failure up to {@code podMaxBackoffSeconds} 10 s. The
 * scheduling cycle the retry would also run is not simulated (it only adds time).
 *
 * <p><b>Scaled clock</b>: the backoff is divided by {@link ProcessContext#backoffScale()} so a run
 * stays short (÷10: 100 ms → 1 s); the report says so next to every figure of this algorithm.
 */
public final class FailFastBackoffAlgorithm implements Algorithm {

  /** kube-scheduler {@code podInitialBackoffSeconds} default. */
  public static final Duration INITIAL_BACKOFF = Duration.ofSeconds(1);

  /** kube-scheduler {@code podMaxBackoffSeconds} default. */
  public static final Duration MAX_BACKOFF = Duration.ofSeconds(10);

  @Override
  public String key() {
    return "failfast-backoff";
  }

  @Override
  public String label() {
    return "(b) HAMi lock, fail fast + kube-scheduler backoff (scaled clock)";
  }

  @Override
  public boolean ours() {
    return false;
  }

  /**
   * The backoff before retry number {@code failures} (1-based), real time.
   *
   * @param failures failed attempts so far; at least 1
   * @return {@code min(1 s × 2^(failures−1), 10 s)}
   * @throws IllegalArgumentException if {@code failures < 1}
   */
  public static Duration backoff(int failures) {
    checkArgument(failures >= 1, "failures must be at least 1, got %s", failures);
    int shift = Math.min(failures - 1, 10);
    Duration d = INITIAL_BACKOFF.multipliedBy(1L << shift);
    return d.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : d;
  }

  @Override
  public Replica replica(ProcessContext process) {
    HamiNodeLock lock = HamiNodeLock.builder(process.client()).build();
    HamiBindLocking binding =
        HamiBindLocking.builder()
            .vendor(NvidiaVendorLock.VENDOR, new NvidiaVendorLock(lock))
            .retryTimeout(Duration.ZERO)
            .build();
    double scale = process.backoffScale();
    long giveUpNanos = process.retryTimeout().toNanos() * 4;
    return new Replica() {
      @Override
      public void acquire(String node, GangPod pod) throws Exception {
        long start = System.nanoTime();
        int failures = 0;
        while (true) {
          try {
            binding.lockAllDevices(node, pod.pod());
            return;
          } catch (Exception e) {
            if (!HamiLockContentionException.isContention(e)
                || System.nanoTime() - start > giveUpNanos) {
              throw e;
            }
          }
          failures++;
          TimeUnit.NANOSECONDS.sleep((long) (backoff(failures).toNanos() / scale));
        }
      }

      @Override
      public void release(String node, GangPod pod) {
        binding.releaseAllDevices(node, pod.pod());
      }
    };
  }

  @Override
  public Plugin plugin(ProcessContext process) {
    HamiNodeLock lock = HamiNodeLock.builder(process.client()).build();
    return (node, pod, observedLockValue) ->
        lock.releaseNodeLock(node, pod.namespace(), pod.name(), false);
  }
}
