package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockException;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.k8s.fixtures.BackendFixtures;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.WriteRecord;
import dev.hamilock.testkit.junit.BackendTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Mutual exclusion judged from outside the server (issue 14, item 3): 4 lock clients, each its own
 * {@code ApiClient} and {@link KubernetesLockStack} (store, owner check, node watch, acquirer),
 * make 2,000 acquisitions (500 each) of random nodes among 3; the history is rebuilt from a node
 * watch ({@link WatchedLockHistory}: every lock value's lifetime in resourceVersion order) and
 * judged by {@link LockHistoryChecker} — the checker {@link MutualExclusionProperties} proves on a
 * fabricated passage and a broken store. Runs on the emulator ({@code mvn verify}) and on the real
 * kube-apiserver ({@code -Preal-apiserver}).
 *
 * <p>Teeth: the same run with a blind-write store (its create overwrites a held lock, no {@code
 * test}) must be flagged by the same watch history and checker.
 */
class MutualExclusionOnBackendsTest {
  static final int CLIENTS = 4;
  static final int NODES = 3;
  static final int ACQUISITIONS_PER_CLIENT = 500;
  static final String NS = "mx-watch";

  /** What one run saw. */
  record Outcome(
      int expected,
      int acquisitions,
      List<String> inProcessViolations,
      Map<String, List<String>> historyViolations,
      Map<String, Integer> acquisitionsSeen,
      Map<String, Integer> lifetimes,
      Map<String, Optional<String>> left,
      WatchedLockHistory history,
      List<String> nodes,
      long millis) {
    int historyViolationCount() {
      return historyViolations.values().stream().mapToInt(List::size).sum();
    }
  }

  @BackendTest
  void twoThousandAcquisitionsByFourClientsNeverOverlapInTheWatchedHistory(KubeBackend k8s)
      throws Exception {
    Outcome o = run(k8s, ACQUISITIONS_PER_CLIENT, Duration.ZERO, locks -> locks.nodeLock());
    assertNeverOverlapped(k8s, o, "client-java");
  }

  /**
   * Issue 27: two client-java replicas and two fabric8 replicas (hami-lock-fabric8's store and
   * owner liveness on their own fabric8 clients, waiting through the same acquire loop) take the
   * same nodes' lock 1,000 times; judged by the same watched history.
   */
  @BackendTest
  void clientJavaAndFabric8ReplicasNeverOverlapInTheWatchedHistory(KubeBackend k8s)
      throws Exception {
    List<io.fabric8.kubernetes.client.KubernetesClient> clients = new ArrayList<>();
    AtomicInteger replica = new AtomicInteger();
    try {
      Outcome o =
          run(
              k8s,
              ACQUISITIONS_PER_CLIENT / 2,
              Duration.ZERO,
              locks -> {
                if (replica.getAndIncrement() % 2 == 0) {
                  return locks.nodeLock();
                }
                io.fabric8.kubernetes.client.KubernetesClient c = Fabric8Replicas.client(k8s);
                clients.add(c);
                return Fabric8Replicas.lock(c, java.time.Clock.systemUTC());
              });
      assertThat(replica.get()).isEqualTo(CLIENTS);
      assertNeverOverlapped(k8s, o, "client-java + fabric8");
    } finally {
      clients.forEach(io.fabric8.kubernetes.client.KubernetesClient::close);
    }
  }

  private static void assertNeverOverlapped(KubeBackend k8s, Outcome o, String clients)
      throws Exception {
    try (WatchedLockHistory h = o.history()) {
      System.out.printf(
          "[%s] mutual exclusion (%s): %d acquisitions by %d clients over %d nodes in %d ms; watched "
              + "acquisitions per node %s, lock lifetimes per node %s, watch streams %d; overlaps %d; locks left %s%n",
          k8s.kind().label(),
          clients,
          o.acquisitions(),
          CLIENTS,
          NODES,
          o.millis(),
          o.acquisitionsSeen(),
          o.lifetimes(),
          h.streams(),
          o.historyViolationCount(),
          o.left());
      assertThat(o.acquisitions()).isEqualTo(o.expected());
      assertThat(o.inProcessViolations()).isEmpty();
      assertThat(h.failure()).isEmpty();
      assertThat(o.historyViolations())
          .allSatisfy((node, v) -> assertThat(v).as("overlaps on %s", node).isEmpty());
      assertThat(o.left())
          .allSatisfy((node, v) -> assertThat(v).as("lock left on %s", node).isEmpty());
      // the watch saw every acquisition: one absent -> present passage each, no coalescing
      assertThat(o.acquisitionsSeen().values().stream().mapToInt(Integer::intValue).sum())
          .isEqualTo(o.acquisitions());
      assertThat(o.lifetimes().values().stream().mapToInt(Integer::intValue).sum())
          .isEqualTo(o.acquisitions());
      if (k8s instanceof ApiServerEmulator emulator) {
        // the watched history is the emulator's own write history (its last 1,000 records per node)
        for (String node : o.nodes()) {
          List<Optional<String>> written = new ArrayList<>();
          for (WriteRecord r : emulator.history("nodes", null, node)) {
            written.add(Optional.ofNullable(r.annotations().get(Cluster.KEY)));
          }
          List<Optional<String>> watched = h.lockValues(node);
          assertThat(watched.subList(watched.size() - (written.size() - 1), watched.size()))
              .isEqualTo(written.subList(1, written.size()));
        }
      }
    }
  }

  @BackendTest
  void theSameRunWithABlindWriteStoreIsFlagged(KubeBackend k8s) throws Exception {
    Outcome o =
        run(
            k8s,
            50,
            Duration.ofMillis(2),
            locks ->
                StoreNodeLock.create(
                    blind(locks.store()), LockSettings.builder().environment(Map.of()).build()));
    try (WatchedLockHistory h = o.history()) {
      System.out.printf(
          "[%s] blind-write store: %d acquisitions, in-process overlaps %d, watched-history "
              + "violations %d%n",
          k8s.kind().label(),
          o.acquisitions(),
          o.inProcessViolations().size(),
          o.historyViolationCount());
      assertThat(h.failure()).isEmpty();
      assertThat(o.historyViolationCount())
          .as("the blind-write store must be flagged")
          .isPositive();
      assertThat(o.historyViolations().values().stream().flatMap(List::stream))
          .allSatisfy(v -> assertThat(v).contains("without a release"));
    }
  }

  /** A store whose create overwrites whatever is there (a read, then a replace of what it read). */
  static LockStore blind(LockStore real) {
    return new LockStore() {
      @Override
      public Optional<String> read(String n, String key) throws LockBackendException {
        return real.read(n, key);
      }

      @Override
      public CasResult createIfAbsent(String n, String key, String value)
          throws LockBackendException {
        for (int i = 0; i < 20; i++) {
          Optional<String> cur = real.read(n, key);
          CasResult r =
              cur.isEmpty()
                  ? real.createIfAbsent(n, key, value)
                  : real.replaceIfEquals(n, key, cur.get(), value);
          if (r.isWritten()) {
            return r;
          }
        }
        return CasResult.notWritten(real.read(n, key));
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
  }

  private static Outcome run(
      KubeBackend k8s, int perClient, Duration hold, Function<KubernetesLockStack, NodeLock> lockOf)
      throws Exception {
    String run = BackendFixtures.runId("mx");
    List<String> nodes = new ArrayList<>();
    for (int i = 0; i < NODES; i++) {
      nodes.add(BackendFixtures.node(k8s, run + "-node-" + i, run));
    }
    for (int c = 0; c < CLIENTS; c++) {
      BackendFixtures.runningPod(k8s, NS, "client-" + c);
    }
    WatchedLockHistory history =
        new WatchedLockHistory(
            k8s.newApiClient(Duration.ZERO), BackendFixtures.RUN_LABEL + "=" + run, Cluster.KEY);
    RetryPolicy policy =
        RetryPolicy.builder()
            .pollInterval(Duration.ofMillis(20))
            .retryTimeout(Duration.ofSeconds(25))
            .build();
    List<KubernetesLockStack> all = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    Map<String, AtomicInteger> inside = new ConcurrentHashMap<>();
    nodes.forEach(n -> inside.put(n, new AtomicInteger()));
    List<String> violations = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger acquisitions = new AtomicInteger();
    long t0 = System.nanoTime();
    try {
      for (int c = 0; c < CLIENTS; c++) {
        KubernetesLockStack locks =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .watchApiClient(k8s.newApiClient(Duration.ZERO))
                .environment(Map.of())
                .retryPolicy(policy)
                .requestTimeout(Duration.ofSeconds(5))
                .build();
        all.add(locks);
        assertThat(locks.watch().orElseThrow().awaitSynced(Duration.ofSeconds(30))).isTrue();
      }
      List<Future<?>> futures = new ArrayList<>();
      Random seeds = new Random();
      for (int c = 0; c < CLIENTS; c++) {
        KubernetesLockStack locks = all.get(c);
        NodeLock lock = lockOf.apply(locks);
        LockOwner me = LockOwner.of(NS, "client-" + c);
        long seed = seeds.nextLong();
        futures.add(
            pool.submit(
                () -> {
                  Random rnd = new Random(seed);
                  for (int i = 0; i < perClient; i++) {
                    String node = nodes.get(rnd.nextInt(nodes.size()));
                    try {
                      locks.acquirer().acquire(node, me, true, List.of(lock));
                    } catch (NodeLockException e) {
                      throw new AssertionError(
                          "client " + me + " could not acquire " + node + " (seed " + seed + ")",
                          e);
                    }
                    acquisitions.incrementAndGet();
                    if (inside.get(node).incrementAndGet() != 1) {
                      violations.add("two holders inside node " + node);
                    }
                    if (!hold.isZero()) {
                      Thread.sleep(hold.toMillis());
                    }
                    inside.get(node).decrementAndGet();
                    lock.release(node, me);
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get(10, TimeUnit.MINUTES);
      }
    } finally {
      all.forEach(KubernetesLockStack::close);
      pool.shutdownNow();
    }
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    Map<String, List<String>> historyViolations = new java.util.TreeMap<>();
    Map<String, Integer> seen = new java.util.TreeMap<>();
    Map<String, Integer> lifetimes = new java.util.TreeMap<>();
    Map<String, Optional<String>> left = new java.util.TreeMap<>();
    for (String node : nodes) {
      assertThat(
              history.awaitSeen(
                  node, BackendFixtures.resourceVersion(k8s, node), Duration.ofSeconds(30)))
          .as("the watch reached %s's last write (%s)", node, history.failure())
          .isTrue();
      historyViolations.put(
          node, LockHistoryChecker.violations(history.lockValues(node), (a, b) -> false));
      seen.put(node, history.acquisitionsSeen(node));
      lifetimes.put(node, history.lifetimes(node).size());
      left.put(node, BackendFixtures.lock(k8s, node));
    }
    return new Outcome(
        CLIENTS * perClient,
        acquisitions.get(),
        violations,
        historyViolations,
        seen,
        lifetimes,
        left,
        history,
        nodes,
        millis);
  }
}
