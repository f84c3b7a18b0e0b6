package dev.hamilock.k8s;

import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Performance figure (not a test; wall time, over HTTP): issue 13 item 7 (HAMi#2589). 8 gang
 * members on one client with the watch off start together and hold the lock 500 ms each; lock
 * requests counted by the emulator, HAMi's fixed 100 ms poll ({@code maxPollInterval = 100 ms})
 * against the default jittered back-off, in the same run. The virtual-time proof is core's {@code
 * Hami2589PollingHerdTest}.
 *
 * <p>Run: {@code java -cp <test classpath> dev.hamilock.k8s.PollingHerdMain [rounds]}.
 */
public final class PollingHerdMain {

  private PollingHerdMain() {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length == 0 ? 3 : Integer.parseInt(args[0]);
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Cluster cluster = new Cluster(k8s);
      for (int i = 0; i < 8; i++) {
        cluster.pod("ns", "gang-" + i, "Running");
      }
      for (int r = 0; r < rounds; r++) {
        for (boolean backoff : new boolean[] {false, true}) {
          RetryPolicy.Builder policy = RetryPolicy.builder();
          if (!backoff) {
            policy.maxPollInterval(RetryPolicy.DEFAULT_POLL_INTERVAL);
          }
          run(k8s, cluster, policy.build(), backoff ? "back-off" : "fixed 100 ms");
        }
      }
    }
  }

  static void run(ApiServerEmulator k8s, Cluster cluster, RetryPolicy policy, String label)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try (KubernetesLockStack locks =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .environment(Map.of())
            .watch(false)
            .retryPolicy(policy)
            .build()) {
      String node = cluster.node(Cluster.unique("herd"));
      NodeLock lock = locks.nodeLock();
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> members = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        LockOwner owner = LockOwner.of("ns", "gang-" + i);
        members.add(
            pool.submit(
                () -> {
                  go.await();
                  int attempts =
                      locks.acquirer().acquire(node, owner, true, List.of(lock)).attempts();
                  Thread.sleep(500);
                  lock.release(node, owner);
                  return attempts;
                }));
      }
      k8s.resetCounters();
      long t0 = System.nanoTime();
      go.countDown();
      int attempts = 0;
      for (Future<Integer> f : members) {
        attempts += f.get(60, TimeUnit.SECONDS);
      }
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      System.out.printf(
          "%-12s 8 members x 500 ms, watch off: %d requests (PATCH %d, GET node %d, GET pod %d),"
              + " %d attempts, drained in %d ms%n",
          label,
          cluster.lockRequests(),
          k8s.requestCount("patch", "nodes"),
          k8s.requestCount("get", "nodes"),
          k8s.requestCount("get", "pods"),
          attempts,
          ms);
    } finally {
      pool.shutdownNow();
    }
  }
}
