package dev.hamilock.k8s;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.LockAcquisition;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Performance figure (not a test): hand-off latency from a holder's release to the next waiting
 * gang member's successful acquire, on the in-process emulator, with the shared watch and without
 * it (poll only, 100 ms). Median and p90 over 200 hand-offs after 50 warm-up ones. The holder
 * releases 20–120 ms after the waiter started, so the poll phase is random.
 *
 * <p>Run: {@code mvn -o -q -pl hami-lock-k8s test-compile exec:java ...} or from an IDE.
 */
public final class HandoffLatencyMain {

  private HandoffLatencyMain() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Cluster cluster = new Cluster(k8s);
      cluster.pod("ns", "holder", "Running");
      cluster.pod("ns", "waiter", "Running");
      for (boolean watch : new boolean[] {true, false}) {
        List<Long> samples = run(k8s, cluster, watch, 50, n);
        Collections.sort(samples);
        System.out.printf(
            "handoff %-13s n=%d median=%.2f ms p90=%.2f ms min=%.2f ms max=%.2f ms%n",
            watch ? "with watch" : "without watch",
            samples.size(),
            ms(samples.get(samples.size() / 2)),
            ms(samples.get(samples.size() * 9 / 10)),
            ms(samples.get(0)),
            ms(samples.get(samples.size() - 1)));
      }
    }
  }

  static List<Long> run(ApiServerEmulator k8s, Cluster cluster, boolean watch, int warmup, int n)
      throws Exception {
    AtomicLong acquiredAt = new AtomicLong();
    NodeLockListener mark =
        new NodeLockListener() {
          @Override
          public void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {
            acquiredAt.set(System.nanoTime());
          }
        };
    ExecutorService pool = Executors.newSingleThreadExecutor();
    List<Long> samples = new ArrayList<>();
    try (KubernetesLockStack holderLocks =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .environment(Map.of())
                .watch(false)
                .build();
        KubernetesLockStack waiterLocks =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .environment(Map.of())
                .watch(watch)
                .listener(mark)
                .retryPolicy(RetryPolicy.defaults())
                .build()) {
      if (watch) {
        waiterLocks.watch().orElseThrow().awaitSynced(Duration.ofSeconds(5));
      }
      String node = cluster.node(Cluster.unique("handoff"));
      LockOwner holder = LockOwner.of("ns", "holder");
      LockOwner waiter = LockOwner.of("ns", "waiter");
      for (int i = 0; i < warmup + n; i++) {
        holderLocks.nodeLock().acquire(node, holder);
        CompletableFuture<LockAcquisition> f =
            waiterLocks
                .acquirer()
                .acquireAsync(node, waiter, true, List.of(waiterLocks.nodeLock()), pool);
        Thread.sleep(20 + ThreadLocalRandom.current().nextInt(100));
        long t0 = System.nanoTime();
        holderLocks.nodeLock().release(node, holder);
        f.get(10, TimeUnit.SECONDS);
        if (i >= warmup) {
          samples.add(acquiredAt.get() - t0);
        }
        waiterLocks.nodeLock().release(node, waiter);
      }
    } finally {
      pool.shutdownNow();
    }
    return samples;
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
