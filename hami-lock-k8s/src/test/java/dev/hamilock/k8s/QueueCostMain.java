package dev.hamilock.k8s;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.annotation.AnnotationLockStore;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.k8s.lock.PodOwnerLiveness;
import dev.hamilock.k8s.watch.NodeLockWatch;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Performance figure (not a test): lock API requests per gang member when N members on one client
 * queue behind a holder and each holds the lock 20 ms (the device plugin's Allocate), counted by
 * the emulator. Two assemblies with the same watch and fair signal: "before" as this library was
 * before the reliable-watch change (every contended attempt GETs the node and the holder pod,
 * waiters re-try every 100 ms even with the watch on) and "after" ({@link KubernetesLockStack}
 * defaults: waits of up to 1 s while the watch is reliable, the watched value instead of the node
 * GET, a 1 s ALIVE cache for the holder pod).
 *
 * <p>Run: {@code java -cp <test classpath> dev.hamilock.k8s.QueueCostMain [N ...]}.
 */
public final class QueueCostMain {

  private QueueCostMain() {}

  public static void main(String[] args) throws Exception {
    int[] sizes =
        args.length == 0
            ? new int[] {8, 32}
            : java.util.Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Cluster cluster = new Cluster(k8s);
      cluster.pod("ns", "holder", "Running");
      for (int n : sizes) {
        for (int i = 0; i < n; i++) {
          cluster.pod("ns", "gang-" + i, "Running");
        }
        for (boolean after : new boolean[] {false, true}) {
          run(k8s, cluster, n, after);
        }
      }
    }
  }

  static void run(ApiServerEmulator k8s, Cluster cluster, int n, boolean after) throws Exception {
    FairReleaseQueue signal;
    ReleaseFeeder watch;
    NodeLock lock;
    NodeLockAcquirer acquirer;
    KubernetesLockStack locks = null;
    if (after) {
      locks =
          KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
              .environment(Map.of())
              .build();
      watch = locks.watch().orElseThrow();
      signal = watch.releaseSignal(locks.nodeLock().key());
      lock = locks.nodeLock();
      acquirer = locks.acquirer();
    } else {
      var client = k8s.newApiClient(Duration.ofSeconds(5));
      watch = NodeLockWatch.builder(client).build();
      signal = watch.releaseSignal(NodeLock.DEFAULT_KEY);
      AnnotationLockStore store =
          NodeAnnotationLockStore.builder(client, Duration.ofSeconds(10))
              .releaseSignal(signal)
              .build();
      lock =
          StoreNodeLock.create(
              store,
              LockSettings.builder()
                  .environment(Map.of())
                  .livenessCacheTtl(Duration.ZERO)
                  .ownerLiveness(PodOwnerLiveness.create(client, Duration.ofSeconds(10), 5))
                  .build());
      RetryPolicy hundredMs =
          RetryPolicy.builder().watchedPollInterval(RetryPolicy.DEFAULT_POLL_INTERVAL).build();
      acquirer = NodeLockAcquirer.create(hundredMs);
      watch.start();
    }
    ExecutorService members = Executors.newFixedThreadPool(n);
    try (KubernetesLockStack holderLocks =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .environment(Map.of())
            .watch(false)
            .build()) {
      watch.awaitSynced(Duration.ofSeconds(5));
      String node = cluster.node(Cluster.unique("queue"));
      LockOwner holder = LockOwner.of("ns", "holder");
      holderLocks.nodeLock().acquire(node, holder);
      while (watch.observedLockValue(node, NodeLock.DEFAULT_KEY).isEmpty()) {
        Thread.sleep(1);
      }
      k8s.resetCounters();
      List<Future<Integer>> results = new ArrayList<>();
      NodeLock l = lock;
      NodeLockAcquirer a = acquirer;
      for (int i = 0; i < n; i++) {
        LockOwner member = LockOwner.of("ns", "gang-" + i);
        results.add(
            members.submit(
                () -> {
                  int attempts = a.acquire(node, member, true, List.of(l)).attempts();
                  Thread.sleep(20);
                  a.releaseAll(node, member, List.of(l));
                  return attempts;
                }));
      }
      while (signal.waiting(node) < n) {
        Thread.sleep(1);
      }
      long t0 = System.nanoTime();
      holderLocks.nodeLock().release(node, holder);
      int attempts = 0;
      for (Future<Integer> f : results) {
        attempts += f.get(60, TimeUnit.SECONDS);
      }
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      long patches = k8s.requestCount("patch", "nodes") - 1; // minus the holder's release
      long nodeGets = k8s.requestCount("get", "nodes");
      long podGets = k8s.requestCount("get", "pods");
      long total = patches + nodeGets + podGets;
      System.out.printf(
          "%-6s N=%-3d per member: %.2f requests with release, %.2f without (PATCH %.2f, GET node %.2f, "
              + "GET pod %.2f), attempts %.2f; queue drained in %d ms%n",
          after ? "after" : "before",
          n,
          total / (double) n,
          (total - n) / (double) n,
          patches / (double) n,
          nodeGets / (double) n,
          podGets / (double) n,
          attempts / (double) n,
          ms);
    } finally {
      members.shutdownNow();
      if (locks != null) {
        locks.close();
      } else {
        watch.close();
      }
    }
  }
}
