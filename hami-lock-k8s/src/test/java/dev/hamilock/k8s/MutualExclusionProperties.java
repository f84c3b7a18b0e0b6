package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockException;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.testing.generators.Props;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.Latency;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Mutual exclusion under faults: independent "scheduler replicas" (each its own ApiClient, store,
 * watch and acquirer) acquire and release one or two nodes concurrently while the emulator injects
 * 500s, apply-then-drop ambiguous answers, 429s, latency and dropped watches. Checked twice:
 * in-process (never two holders inside the critical section) and from the emulator's write history
 * (the lock never passes between holders without a release; all owners are alive and the lock
 * timeout is 5 min, so no takeover is legitimate). After quiescence no lock is held.
 */
class MutualExclusionProperties {

  static ApiServerEmulator k8s;
  static Cluster cluster;

  @BeforeAll
  static void start() {
    k8s = ApiServerEmulator.start();
    cluster = new Cluster(k8s);
    for (int r = 0; r < 8; r++) {
      cluster.pod("mx", "replica-" + r, "Running");
    }
  }

  @AfterAll
  static void stop() {
    k8s.close();
  }

  /**
   * 10 runs: 4–6 replicas on 1–2 nodes, the seed choosing fault counts and each replica's nodes. A
   * failure re-runs at most 3 times to shrink (each run takes up to a minute); the seed replays the
   * faults and choices, not the thread interleaving.
   */
  @Test
  void lockNeverPassesBetweenLiveHoldersUnderFaults() {
    Props.qt(10)
        .withShrinkCycles(3)
        .forAll(integers().between(4, 6), integers().between(1, 2), longs().all())
        .checkAssert(
            (replicas, nodeCount, seed) ->
                Props.unchecked(() -> neverPasses(replicas, nodeCount, seed)));
  }

  private static void neverPasses(int replicas, int nodeCount, long seed) throws Exception {
    Random random = new Random(seed);
    List<String> nodes = new ArrayList<>();
    for (int i = 0; i < nodeCount; i++) {
      nodes.add(cluster.node(Cluster.unique("mx")));
    }
    k8s.clearFaults();
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(1 + random.nextInt(3))
            .respondStatus(500, "InternalError", "injected"));
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(1 + random.nextInt(3))
            .dropResponseAfterApply());
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(1 + random.nextInt(3))
            .respondStatus(429, "TooManyRequests", "injected"));
    k8s.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("nodes")
            .times(1 + random.nextInt(2))
            .respondStatus(503, "ServiceUnavailable", "injected"));
    k8s.setLatency(Latency.uniform(Duration.ZERO, Duration.ofMillis(1)));
    RetryPolicy policy =
        RetryPolicy.builder()
            .pollInterval(Duration.ofMillis(20))
            .retryTimeout(Duration.ofSeconds(8))
            .build();
    List<KubernetesLockStack> all = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(replicas + 1);
    Map<String, AtomicInteger> inside = new java.util.concurrent.ConcurrentHashMap<>();
    nodes.forEach(n -> inside.put(n, new AtomicInteger()));
    List<String> violations = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger acquisitions = new AtomicInteger();
    try {
      for (int r = 0; r < replicas; r++) {
        all.add(
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(2)))
                .environment(Map.of())
                .retryPolicy(policy)
                .requestTimeout(Duration.ofSeconds(1))
                .build());
      }
      List<Future<?>> futures = new ArrayList<>();
      for (int r = 0; r < replicas; r++) {
        KubernetesLockStack locks = all.get(r);
        LockOwner me = LockOwner.of("mx", "replica-" + r);
        long replicaSeed = random.nextLong();
        futures.add(
            pool.submit(
                () -> {
                  Random rnd = new Random(replicaSeed);
                  for (int i = 0; i < 4; i++) {
                    String node = nodes.get(rnd.nextInt(nodes.size()));
                    try {
                      locks.acquirer().acquire(node, me, true, List.of(locks.nodeLock()));
                    } catch (LockContentionException e) {
                      continue;
                    } catch (NodeLockException e) {
                      releaseUntilDone(locks.nodeLock(), node, me); // unknown outcome: clean up
                      continue;
                    }
                    acquisitions.incrementAndGet();
                    if (inside.get(node).incrementAndGet() != 1) {
                      violations.add("two holders inside node " + node);
                    }
                    Thread.sleep(1);
                    inside.get(node).decrementAndGet();
                    releaseUntilDone(locks.nodeLock(), node, me);
                  }
                  return null;
                }));
      }
      futures.add(
          pool.submit(
              () -> {
                for (int i = 0; i < 2; i++) {
                  Thread.sleep(20);
                  k8s.dropWatches();
                }
                return null;
              }));
      for (Future<?> f : futures) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      k8s.clearFaults();
      k8s.setLatency(Latency.NONE);
      all.forEach(KubernetesLockStack::close);
      pool.shutdownNow();
    }
    assertThat(violations).isEmpty();
    assertThat(acquisitions.get()).isPositive();
    for (String node : nodes) {
      assertThat(LockHistoryChecker.violations(cluster.lockHistory(node), (a, b) -> false))
          .isEmpty();
      assertThat(cluster.lock(node)).as("lock left on %s", node).isEmpty();
    }
  }

  private static void releaseUntilDone(NodeLock lock, String node, LockOwner owner)
      throws InterruptedException {
    for (int i = 0; i < 50; i++) {
      try {
        lock.release(node, owner);
        return;
      } catch (LockBackendException e) {
        Thread.sleep(10);
      }
    }
    throw new AssertionError("could not release " + node + " for " + owner);
  }

  // ----------------------------------------------------------------- the checker itself

  @Test
  void checkerFlagsAFabricatedPassageWithoutRelease() {
    List<Optional<String>> history =
        List.of(
            Optional.empty(),
            Optional.of("2026-08-01T06:00:00Z,ns,a"),
            Optional.empty(),
            Optional.of("2026-08-01T06:00:01Z,ns,b"),
            Optional.of("2026-08-01T06:00:02Z,ns,b"), // re-stamp of b: fine
            Optional.of("2026-08-01T06:00:03Z,ns,c")); // b → c without release: violation
    assertThat(LockHistoryChecker.violations(history, (x, y) -> false))
        .singleElement()
        .asString()
        .contains("ns,b")
        .contains("ns,c");
    assertThat(LockHistoryChecker.violations(history, (x, y) -> y.endsWith(",ns,c"))).isEmpty();
  }

  @Test
  void checkerFlagsADeliberatelyBrokenStore() throws Exception {
    String node = cluster.node(Cluster.unique("broken"));
    LockStore real =
        NodeAnnotationLockStore.builder(k8s.apiClient(), Duration.ofSeconds(10)).build();
    LockStore blind = new LockStore() { // "create" overwrites whatever is there
          @Override
          public Optional<String> read(String n, String key) throws LockBackendException {
            return real.read(n, key);
          }

          @Override
          public CasResult createIfAbsent(String n, String key, String value)
              throws LockBackendException {
            Optional<String> cur = real.read(n, key);
            return cur.isEmpty()
                ? real.createIfAbsent(n, key, value)
                : real.replaceIfEquals(n, key, cur.get(), value);
          }

          @Override
          public CasResult replaceIfEquals(String n, String key, String expected, String value)
              throws LockBackendException {
            return real.replaceIfEquals(n, key, expected, value);
          }

          @Override
          public boolean deleteIfEquals(String n, String key, String expected)
              throws LockBackendException {
            return real.deleteIfEquals(n, key, expected);
          }
        };
    NodeLock broken =
        StoreNodeLock.create(blind, LockSettings.builder().environment(Map.of()).build());
    broken.acquire(node, LockOwner.of("mx", "replica-0"));
    broken.acquire(node, LockOwner.of("mx", "replica-1"));
    assertThat(LockHistoryChecker.violations(cluster.lockHistory(node), (a, b) -> false))
        .hasSize(1);
  }
}
