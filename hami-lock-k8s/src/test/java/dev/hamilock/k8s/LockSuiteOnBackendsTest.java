package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.LockAcquisition;
import dev.hamilock.reference.HamiDevicePlugin;
import dev.hamilock.reference.HamiLockContentionException;
import dev.hamilock.reference.HamiNodeLock;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The lock suite of hami-lock-k8s on every selected backend (the emulator in {@code mvn verify},
 * the real kube-apiserver on etcd with {@code -Preal-apiserver}): acquire, release, re-entry, the
 * cost of an uncontended acquire + release, takeover of expired / dangling / malformed locks, and
 * interoperability both ways with hami-reference's HAMi lock and device plugin. Only {@link
 * KubeBackend} operations are used, so the same assertions judge both servers.
 */
class LockSuiteOnBackendsTest {

  static final Instant NOW = Instant.parse("2026-08-01T06:00:00Z");
  static ExecutorService pool;
  KubeBackend k8s;
  Cluster cluster;
  TestClock clock;
  NodeLock lock;
  String node;
  final LockOwner me = LockOwner.of("ns", "me");

  @BeforeAll
  static void startPool() {
    pool = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void stopPool() {
    pool.shutdownNow();
  }

  @BeforeEach
  void setUp(KubeBackend backend) {
    k8s = backend;
    cluster = new Cluster(backend);
    clock = new TestClock(NOW);
    lock = newLock(clock);
    node = cluster.node(Cluster.unique("suite"));
    cluster.namespace("ns");
    cluster.pod("ns", "me", "Running"); // a live holder: others contend instead of taking over
  }

  @AfterEach
  void tearDown() {
    opened.forEach(Closeable::close);
    opened.clear();
  }

  /** What each lock of this suite opened (stacks, clients), closed after each test. */
  final List<Closeable> opened = new java.util.ArrayList<>();

  /** Closes without a checked exception. */
  interface Closeable extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * The lock under test: the client this suite runs on (here client-java's {@link
   * KubernetesLockStack}; {@code LockSuiteOnFabric8Test} overrides it), fail-fast, no watch.
   *
   * @param c the lock's clock
   * @return a lock on {@link #k8s}, closed after the test
   */
  NodeLock newLock(TestClock c) {
    KubernetesLockStack l =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .clock(c)
            .environment(Map.of())
            .retryPolicy(RetryPolicy.failFast())
            .watch(false)
            .requestTimeout(Duration.ofSeconds(5))
            .build();
    opened.add(l::close);
    return l.nodeLock();
  }

  // ------------------------------------------------------------------ acquire, release, re-entry

  @BackendTest
  void acquireReenterReleaseAndAcquireAgain() throws Exception {
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z,ns,me");
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.REENTERED);
    assertThat(lock.read(node)).hasValueSatisfying(r -> assertThat(r.owner()).contains(me));
    assertThatThrownBy(() -> lock.acquire(node, LockOwner.of("ns", "other")))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> assertThat(e.holderValue()).contains("2026-08-01T06:00:00Z,ns,me"));
    assertThat(lock.release(node, LockOwner.of("ns", "other"))).isFalse();
    assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z,ns,me");
    assertThat(lock.release(node, me)).isTrue();
    assertThat(cluster.lock(node)).isEmpty();
    assertThat(lock.release(node, me)).isFalse();
    assertThat(lock.acquire(node, LockOwner.of("ns", "other"))).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(lock.release(node, LockOwner.of("ns", "other"))).isTrue();
  }

  /** Issue 14 item 6: uncontended acquire + release = 2 requests, counted by the server. */
  @BackendTest
  void uncontendedAcquireAndReleaseAreTwoPatches() throws Exception {
    k8s.resetCounters();
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(lock.release(node, me)).isTrue();
    assertThat(k8s.requestCount("patch", "nodes")).isEqualTo(2);
    assertThat(k8s.requestCount("get", "nodes")).isZero();
    assertThat(k8s.requestCount("get", "pods")).isZero();
  }

  // ------------------------------------------------------------------ takeover

  @BackendTest
  void expiredLockOfALivePodIsTakenOverOnlyAfterTheTimeout() throws Exception {
    String holder = Cluster.unique("old-holder");
    cluster.pod("ns", holder, "Running");
    cluster.setLock(node, "2026-08-01T06:00:00Z,ns," + holder);
    // issue 13 item 2: expiry counts from the stamp and from this process's first sighting
    assertThatThrownBy(() -> lock.acquire(node, me)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(5));
    assertThatThrownBy(() -> lock.acquire(node, me)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofSeconds(1));
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
    assertThat(cluster.lock(node)).contains("2026-08-01T06:05:01Z,ns,me");
  }

  @BackendTest
  void danglingOwnersAreTakenOverAtOnce() throws Exception {
    for (String state : List.of("Succeeded", "Failed", "deleted", "terminating")) {
      String n = cluster.node(Cluster.unique("dangling"));
      String owner = Cluster.unique("owner");
      switch (state) {
        case "deleted" -> {}
        case "terminating" -> cluster.terminatingPod("ns", owner);
        default -> cluster.pod("ns", owner, state);
      }
      cluster.setLock(n, "2026-08-01T05:59:59Z,ns," + owner);
      assertThat(lock.acquire(n, me))
          .as("owner " + state)
          .isEqualTo(AcquireOutcome.TOOK_OVER_DANGLING);
      assertThat(cluster.lock(n)).as("owner " + state).contains("2026-08-01T06:00:00Z,ns,me");
    }
  }

  @BackendTest
  void malformedValuesAreTypedContentionAndBlockAtMostOneLockTimeout() throws Exception {
    for (String value : List.of("lock", "a,b", "junk,foo,ns,name", "", "bad,ns,pod")) {
      TestClock c = new TestClock(NOW);
      {
        NodeLock nl = newLock(c);
        String n = cluster.node(Cluster.unique("malformed"));
        cluster.setLock(n, value);
        assertThatThrownBy(() -> nl.acquire(n, me))
            .as(value)
            .isInstanceOfSatisfying(
                LockContentionException.class,
                e -> {
                  assertThat(e.holderValue()).contains(value);
                  assertThat(e.getMessage())
                      .contains("\"" + value + "\"")
                      .endsWith("node lock contention");
                });
        assertThat(nl.release(n, me)).isFalse();
        assertThat(cluster.lock(n)).contains(value);
        c.advance(Duration.ofMinutes(5));
        assertThatThrownBy(() -> nl.acquire(n, me)).isInstanceOf(LockContentionException.class);
        c.advance(Duration.ofSeconds(1));
        assertThat(nl.acquire(n, me)).as(value).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
        assertThat(nl.release(n, me)).isTrue();
        assertThat(cluster.lock(n)).isEmpty();
      }
    }
  }

  @BackendTest
  void aNodeWithoutAnnotationsIsLockedAndReleased() throws Exception {
    String bare = cluster.bareNode(Cluster.unique("bare"));
    assertThat(lock.acquire(bare, me)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(cluster.lock(bare)).contains("2026-08-01T06:00:00Z,ns,me");
    assertThat(lock.release(bare, me)).isTrue();
    assertThat(cluster.lock(bare)).isEmpty();
  }

  // ------------------------------------------------------------------ interop with hami-reference

  HamiNodeLock hami(TestClock c) {
    return HamiNodeLock.builder(k8s.newApiClient(Duration.ofSeconds(5)))
        .clock(Clock.fixed(c.instant(), ZoneOffset.UTC))
        .build();
  }

  @BackendTest
  void hamisReleaseRemovesALockWeTookAndOursRemovesHamis() throws Exception {
    HamiNodeLock hami = hami(clock);
    cluster.pod("ns", "pod-a", "Pending");
    cluster.pod("ns", "pod-h", "Pending");
    lock.acquire(node, LockOwner.of("ns", "pod-a"));
    hami.releaseNodeLock(node, "ns", "pod-a", false);
    assertThat(cluster.lock(node)).isEmpty();

    hami.lockNode(node, "ns", "pod-h");
    assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,pod-h"));
    assertThat(lock.release(node, LockOwner.of("ns", "pod-h"))).isTrue();
    assertThat(cluster.lock(node)).isEmpty();
  }

  @BackendTest
  void hamiContendsWithOurLock() throws Exception {
    HamiNodeLock hami = hami(clock);
    lock.acquire(node, LockOwner.of("ns", "pod-a"));
    assertThatThrownBy(() -> hami.lockNode(node, "ns", "pod-h"))
        .satisfies(e -> assertThat(HamiLockContentionException.isContention(e)).isTrue());
    assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,pod-a"));
  }

  @BackendTest
  void weWaitOnHamisLockThroughTheWatchAndTakeItWhenHamiReleases() throws Exception {
    TestClock now = new TestClock(Instant.now());
    HamiNodeLock hami = hami(now);
    cluster.pod("ns", "pod-a", "Pending");
    cluster.pod("ns", "pod-h", "Pending");
    try (KubernetesLockStack ours =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .clock(now)
            .environment(Map.of())
            .retryPolicy(RetryPolicy.builder().retryTimeout(Duration.ofSeconds(10)).build())
            .build()) {
      hami.lockNode(node, "ns", "pod-h");
      String hamiValue = cluster.lock(node).orElseThrow();
      assertThatThrownBy(() -> ours.nodeLock().acquire(node, LockOwner.of("ns", "pod-a")))
          .isInstanceOfSatisfying(
              LockContentionException.class,
              e -> {
                assertThat(e.holderValue()).contains(hamiValue);
                assertThat(e.holder().flatMap(r -> r.owner()))
                    .contains(LockOwner.of("ns", "pod-h"));
              });
      assertThat(ours.watch().orElseThrow().awaitSynced(Duration.ofSeconds(10))).isTrue();
      CompletableFuture<LockAcquisition> waiting =
          ours.acquirer()
              .acquireAsync(
                  node, LockOwner.of("ns", "pod-a"), true, List.of(ours.nodeLock()), pool);
      WatchAndCostTest.awaitWaiting(WatchAndCostTest.queue(ours), node, 1);
      assertThat(waiting).isNotDone();
      hami.releaseNodeLock(node, "ns", "pod-h", false);
      LockAcquisition a = waiting.get(10, TimeUnit.SECONDS);
      assertThat(a.attempts()).isGreaterThanOrEqualTo(2);
      assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,pod-a"));
    }
  }

  @BackendTest
  void malformedValueBlocksHamiForeverButUsOnlyOneLockTimeout() throws Exception {
    HamiNodeLock hami = hami(clock);
    cluster.setLock(node, "junk,foo,ns,name");
    assertThatThrownBy(() -> hami.lockNode(node, "ns", "pod-h"))
        .satisfies(e -> assertThat(HamiLockContentionException.isContention(e)).isFalse());
    assertThatThrownBy(() -> lock.acquire(node, LockOwner.of("ns", "pod-a")))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> assertThat(e.holderValue()).contains("junk,foo,ns,name"));
    clock.advance(Duration.ofMinutes(5).plusSeconds(1));
    assertThat(lock.acquire(node, LockOwner.of("ns", "pod-a")))
        .isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
    hami.releaseNodeLock(node, "ns", "pod-a", false);
    assertThat(cluster.lock(node)).isEmpty();
  }

  @BackendTest
  void hamisDevicePluginFindsOurLocksOwner() throws Exception {
    String pod = Cluster.unique("pod-dp");
    cluster.pod("ns", pod, "Pending");
    lock.acquire(node, LockOwner.of("ns", pod));
    HamiDevicePlugin plugin =
        new HamiDevicePlugin(k8s.newApiClient(Duration.ofSeconds(5)), hami(clock));
    V1Pod found = plugin.getPendingPod(node);
    assertThat(found.getMetadata().getNamespace()).isEqualTo("ns");
    assertThat(found.getMetadata().getName()).isEqualTo(pod);
  }
}
