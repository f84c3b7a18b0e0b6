package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.LockAcquisition;
import dev.hamilock.testkit.FaultRule;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSchedulingGroup;
import io.kubernetes.client.openapi.models.V1PodSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Spec §8 V09–V33 (HAMi's nodelock_test.go and scheduler_test.go expectations) on this module's
 * lock over the emulator. Where a vector describes HAMi's merge-patch internals (409 retries, GET
 * counts), the equivalent behaviour of the one-request protocol is asserted instead and the test
 * says so.
 */
class ConformanceVectorsTest extends OnSharedEmulator {

  static final Instant NOW = Instant.parse("2026-08-01T06:00:00Z");
  TestClock clock;
  final List<KubernetesLockStack> opened = new ArrayList<>();

  @BeforeEach
  void reset() {
    k8s.clearFaults();
    clock = new TestClock(NOW);
  }

  @org.junit.jupiter.api.AfterEach
  void closeLocks() {
    opened.forEach(KubernetesLockStack::close);
  }

  KubernetesLockStack locks(Duration lockTimeout, RetryPolicy policy, boolean watch) {
    KubernetesLockStack l =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .clock(clock)
            .environment(Map.of())
            .lockTimeout(lockTimeout)
            .retryPolicy(policy)
            .watch(watch)
            .requestTimeout(Duration.ofSeconds(2))
            .build();
    opened.add(l);
    return l;
  }

  NodeLock lock() {
    return locks(Duration.ofMinutes(5), RetryPolicy.failFast(), false).nodeLock();
  }

  // ------------------------------------------------------------------ lock state machine

  @Test
  void v09_freeNodeIsLockedWithOwnerFormValue() throws Exception {
    String node = cluster.node(Cluster.unique("worker-3"));
    assertThat(lock().acquire(node, LockOwner.of("hami-ns", "hami")))
        .isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z,hami-ns,hami");
  }

  @Test
  void v10_v33_absentNodeIsAnErrorNotContention() {
    assertThatThrownBy(() -> lock().acquire("non-existent-node", LockOwner.of("hami-ns", "hami")))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(LockBackendException.Kind.NOT_FOUND);
              assertThat(e.getMessage()).contains("not found").contains("non-existent-node");
            });
  }

  static Stream<Arguments> liveHolders() {
    return Stream.of(
        Arguments.of("other-ns", "other-pod"), Arguments.of("hami-ns", "other-pod-same-ns"));
  }

  @ParameterizedTest(name = "V11/V12 lock by existing {0}/{1} contends")
  @MethodSource("liveHolders")
  void v11_v12_lockByExistingOtherPodIsContention(String ns, String name) {
    String node = cluster.node(Cluster.unique("n"));
    cluster.pod(ns, Cluster.unique(name), "Running");
    String holder =
        cluster
            .k8s
            .list("pods", ns)
            .get(cluster.k8s.list("pods", ns).size() - 1)
            .path("metadata")
            .path("name")
            .asText();
    String value = "2026-08-01T05:59:00Z," + ns + "," + holder;
    cluster.setLock(node, value);
    assertThatThrownBy(() -> lock().acquire(node, LockOwner.of("hami-ns", "hami")))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> {
              assertThat(e.getMessage())
                  .endsWith("node lock contention")
                  .contains(node)
                  .contains(value);
              assertThat(e.holderValue()).contains(value);
              assertThat(e.holder().flatMap(r -> r.owner())).contains(LockOwner.of(ns, holder));
            });
    assertThat(cluster.lock(node)).contains(value);
  }

  @Test
  void v13_malformedValueIsTypedContentionNamingTheValue_improvementOverHamisError() {
    String node = cluster.node(Cluster.unique("n"));
    cluster.setLock(node, "lock");
    assertThatThrownBy(() -> lock().acquire(node, LockOwner.of("hami-ns", "hami")))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> {
              assertThat(e.holderValue()).contains("lock");
              assertThat(e.getMessage()).contains("\"lock\"").contains("malformed");
            });
  }

  @Test
  void v14_freshLockOfExistingPodContendsWithTimeoutInMessage() {
    String node = cluster.node(Cluster.unique("n"));
    cluster.pod("test-ns", "test-pod", "Running");
    cluster.setLock(node, "2026-08-01T05:59:30Z,test-ns,test-pod");
    NodeLock l = locks(Duration.ofMinutes(2), RetryPolicy.failFast(), false).nodeLock();
    assertThatThrownBy(() -> l.acquire(node, LockOwner.of("new-ns", "new-pod")))
        .isInstanceOf(LockContentionException.class)
        .hasMessageContaining("has been locked within 2m0s");
  }

  @Test
  void v15_freshLockOfAbsentPodIsTakenOverAsDangling() throws Exception {
    String node = cluster.node(Cluster.unique("n"));
    cluster.setLock(node, "2026-08-01T05:59:30Z,test-ns," + Cluster.unique("gone-pod"));
    NodeLock l = locks(Duration.ofMinutes(2), RetryPolicy.failFast(), false).nodeLock();
    assertThat(l.acquire(node, LockOwner.of("new-ns", "new-pod")))
        .isEqualTo(AcquireOutcome.TOOK_OVER_DANGLING);
    assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z,new-ns,new-pod");
  }

  @Test
  void v16_sameOwnerTwiceIsReentrant() throws Exception {
    String node = cluster.node(Cluster.unique("n"));
    cluster.pod("test-ns", "multi-vendor-pod", "Pending");
    NodeLock l = lock();
    LockOwner owner = LockOwner.of("test-ns", "multi-vendor-pod");
    assertThat(l.acquire(node, owner)).isEqualTo(AcquireOutcome.ACQUIRED);
    clock.advance(Duration.ofSeconds(3));
    assertThat(l.acquire(node, owner)).isEqualTo(AcquireOutcome.REENTERED);
    assertThat(cluster.lock(node))
        .contains("2026-08-01T06:00:03Z,test-ns,multi-vendor-pod"); // re-stamped
  }

  static Stream<Arguments> v17() {
    return Stream.of(
        Arguments.of(
            "2026-08-01T05:54:59Z,ns,existing-pod", true, AcquireOutcome.TOOK_OVER_EXPIRED),
        Arguments.of("2026-08-01T05:58:00Z", false, null),
        Arguments.of("2026-08-01T13:54:59+08:00", true, AcquireOutcome.TOOK_OVER_EXPIRED),
        Arguments.of(
            "2026-08-01T05:55:00Z,ns,existing-pod", false, null)); // exactly 5m: not expired
  }

  @ParameterizedTest(name = "V17 {0} ⇒ takeover {1}")
  @MethodSource("v17")
  void v17_expiryIsStrictlyGreaterThanTheTimeout(
      String value, boolean takeover, AcquireOutcome outcome) throws Exception {
    String node = cluster.node(Cluster.unique("n"));
    cluster.pod("ns", "existing-pod", "Running");
    cluster.setLock(node, value);
    NodeLock l = lock();
    // clock-skew rule (issue 13 item 2): this process must have seen the value for more than one
    // lock timeout before its stamp can expire it; observe it 5m2s before the vector's "now"
    Instant now = clock.instant();
    clock.set(now.minus(Duration.ofMinutes(5).plusSeconds(2)));
    assertThatThrownBy(() -> l.acquire(node, LockOwner.of("ns", "new-pod")))
        .as("first sight")
        .isInstanceOf(LockContentionException.class);
    clock.set(now);
    if (takeover) {
      assertThat(l.acquire(node, LockOwner.of("ns", "new-pod"))).isEqualTo(outcome);
      assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z,ns,new-pod");
    } else {
      assertThatThrownBy(() -> l.acquire(node, LockOwner.of("ns", "new-pod")))
          .isInstanceOf(LockContentionException.class);
      assertThat(cluster.lock(node)).contains(value);
    }
  }

  // ------------------------------------------------------------------ release V18–V23

  @Test
  void v18_releaseCases() throws Exception {
    NodeLock l = lock();
    LockOwner hami = LockOwner.of("hami-ns", "hami");
    assertThatThrownBy(() -> l.release("non-existent-node", hami))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.NOT_FOUND));
    String free = cluster.node(Cluster.unique("n"));
    assertThat(l.release(free, hami)).isFalse();
    String others = cluster.node(Cluster.unique("n"));
    cluster.setLock(others, "2026-08-01T05:59:00Z,namespace,pod");
    assertThat(l.release(others, hami)).isFalse();
    assertThat(cluster.lock(others)).contains("2026-08-01T05:59:00Z,namespace,pod");
    String own = cluster.node(Cluster.unique("n"));
    l.acquire(own, hami);
    assertThat(l.release(own, hami)).isTrue();
    assertThat(cluster.lock(own)).isEmpty();
    // documented difference from HAMi (spec §7 item 3): a legacy value is never removed by
    // a pod's release, because it cannot be attributed to that pod
    String legacy = cluster.node(Cluster.unique("n"));
    cluster.setLock(legacy, "2026-07-03T15:35:10+08:00");
    assertThat(l.release(legacy, hami)).isFalse();
    assertThat(cluster.lock(legacy)).contains("2026-07-03T15:35:10+08:00");
  }

  @Test
  void v19_replacementBeforeOurReleaseIsKept_onePatch() throws Exception {
    // HAMi: GETs see A, patch 409, GET sees B ⇒ ok, B kept. Here: A's remembered value is
    // tested and removed in one patch; B's value in between makes the test fail.
    String node = cluster.node(Cluster.unique("n"));
    NodeLock l = lock();
    LockOwner a = LockOwner.of("ns", "pod-a");
    l.acquire(node, a);
    cluster.setLock(node, "2026-08-01T06:00:00Z,ns,pod-b");
    k8s.resetCounters();
    assertThat(l.release(node, a)).isFalse();
    assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z,ns,pod-b");
    assertThat(cluster.patches()).isEqualTo(1);
  }

  @Test
  void v20_legacyValueIsKept_noPatch() throws Exception {
    String node = cluster.node(Cluster.unique("n"));
    cluster.setLock(node, "2026-08-01T06:00:00Z");
    NodeLock l = lock();
    k8s.resetCounters();
    assertThat(l.release(node, LockOwner.of("ns", "pod-a"))).isFalse();
    assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z");
    assertThat(cluster.patches()).isZero();
  }

  @Test
  void v21_restampedOwnLockIsRemoved_twoPatches() throws Exception {
    String node = cluster.node(Cluster.unique("n"));
    NodeLock l = lock();
    LockOwner a = LockOwner.of("ns", "pod-a");
    clock.set(Instant.parse("2026-07-29T13:00:00Z"));
    l.acquire(node, a);
    cluster.setLock(node, "2026-07-29T13:00:01Z,ns,pod-a"); // re-stamped elsewhere
    k8s.resetCounters();
    assertThat(l.release(node, a)).isTrue();
    assertThat(cluster.lock(node)).isEmpty();
    assertThat(cluster.patches()).isEqualTo(2);
  }

  @Test
  void v22_lostAnswerOfOurSetIsSuccess_onePatch() throws Exception {
    String node = cluster.node(Cluster.unique("n"));
    NodeLock l = lock();
    k8s.addFault(
        FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
    k8s.resetCounters();
    assertThat(l.acquire(node, LockOwner.of("ns", "pod-a"))).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z,ns,pod-a");
    assertThat(cluster.patches()).isEqualTo(1);
  }

  @Test
  void v23_otherWriterBetweenReadAndPatchIsContention_onePatch() {
    // HAMi: patch 409, re-read shows pod-b ⇒ contention. Here pod-b's write lands just before
    // our single test-null patch, which fails (422) ⇒ one GET ⇒ contention.
    String node = cluster.node(Cluster.unique("n"));
    cluster.pod("ns", "pod-b", "Running");
    NodeLock l = lock();
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(1)
            .invoke(r -> cluster.setLock(node, "2026-08-01T06:00:00Z,ns,pod-b")));
    k8s.resetCounters();
    assertThatThrownBy(() -> l.acquire(node, LockOwner.of("ns", "pod-a")))
        .isInstanceOf(LockContentionException.class);
    assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z,ns,pod-b");
    assertThat(cluster.patches()).isEqualTo(1);
  }

  // ------------------------------------------------------------------ concurrency V24–V25

  @Test
  void v24_twoConcurrentAcquiresOnAFreeNode_exactlyOneWins() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 5; round++) {
        String node = cluster.node(Cluster.unique("n"));
        cluster.pod("ns", "pod-a-" + round, "Running");
        cluster.pod("ns", "pod-b-" + round, "Running");
        NodeLock la = lock();
        NodeLock lb = lock();
        CountDownLatch go = new CountDownLatch(1);
        int r = round;
        CompletableFuture<Object> fa =
            CompletableFuture.supplyAsync(() -> attempt(go, la, node, "pod-a-" + r), pool);
        CompletableFuture<Object> fb =
            CompletableFuture.supplyAsync(() -> attempt(go, lb, node, "pod-b-" + r), pool);
        go.countDown();
        List<Object> results = List.of(fa.get(10, TimeUnit.SECONDS), fb.get(10, TimeUnit.SECONDS));
        assertThat(results).filteredOn(o -> o == AcquireOutcome.ACQUIRED).hasSize(1);
        assertThat(results).filteredOn(o -> o instanceof LockContentionException).hasSize(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static Object attempt(CountDownLatch go, NodeLock lock, String node, String pod) {
    try {
      go.await();
      return lock.acquire(node, LockOwner.of("ns", pod));
    } catch (Exception e) {
      return e;
    }
  }

  @Test
  void v25_holdingOneNodeNeverBlocksAnother() throws Exception {
    // HAMi's in-process per-node mutex: node-b proceeds while node-a is held. Here there is no
    // in-process mutex at all; a held node-a answers contention at once and node-b is free.
    String nodeA = cluster.node(Cluster.unique("node-a"));
    String nodeB = cluster.node(Cluster.unique("node-b"));
    cluster.pod("ns", "holder", "Running");
    NodeLock l = lock();
    LockOwner holder = LockOwner.of("ns", "holder");
    l.acquire(nodeA, holder);
    assertThat(l.acquire(nodeB, LockOwner.of("ns", "other"))).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThatThrownBy(() -> l.acquire(nodeA, LockOwner.of("ns", "other2")))
        .isInstanceOf(LockContentionException.class);
    l.release(nodeA, holder);
    assertThat(l.acquire(nodeA, LockOwner.of("ns", "other2"))).isEqualTo(AcquireOutcome.ACQUIRED);
  }

  // ------------------------------------------------------------------ pod-group retry V27–V32

  @Test
  void v27_nonMemberFailsFastWithOneAttempt() {
    String node = cluster.node(Cluster.unique("n"));
    cluster.pod("ns", "holder27", "Running");
    cluster.setLock(node, "2026-08-01T05:59:59Z,ns,holder27");
    KubernetesLockStack l = locks(Duration.ofMinutes(5), RetryPolicy.defaults(), false);
    Recorder rec = new Recorder();
    var acquirer =
        dev.hamilock.core.acquire.NodeLockAcquirer.create(
            LockSettings.builder().retryPolicy(RetryPolicy.defaults()).listener(rec).build());
    assertThatThrownBy(
            () -> acquirer.acquire(node, LockOwner.of("ns", "p"), false, List.of(l.nodeLock())))
        .isInstanceOf(LockContentionException.class)
        .hasMessageContaining("node lock contention");
    assertThat(rec.attempts).containsExactly(1);
  }

  @Test
  void v28_memberRetriesUntilTheHolderReleases() throws Exception {
    String node = cluster.node(Cluster.unique("n"));
    cluster.pod("ns", "holder28", "Running");
    KubernetesLockStack holderLocks = locks(Duration.ofMinutes(5), RetryPolicy.failFast(), false);
    LockOwner holder = LockOwner.of("ns", "holder28");
    holderLocks.nodeLock().acquire(node, holder);
    KubernetesLockStack l =
        locks(
            Duration.ofMinutes(5),
            RetryPolicy.builder().retryTimeout(Duration.ofSeconds(2)).build(),
            true);
    V1Pod member =
        pod("ns", "member", Map.of("scheduling.x-k8s.io/pod-group", "my-training-job"), null);
    CompletableFuture<LockAcquisition> f =
        l.acquirer()
            .acquireAsync(
                node,
                KubernetesLockOwners.lockOwner(member),
                KubernetesLockOwners.isGangMember(member),
                List.of(l.nodeLock()),
                Executors.newSingleThreadExecutor());
    WatchAndCostTest.awaitWaiting(WatchAndCostTest.queue(l), node, 1); // its first attempt failed
    holderLocks.nodeLock().release(node, holder);
    LockAcquisition a = f.get(5, TimeUnit.SECONDS);
    assertThat(a.attempts()).isGreaterThanOrEqualTo(2);
    assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,member"));
  }

  @Test
  void v29_memberThatAlwaysContendsTimesOutAndRollsBackPartialLocks() throws Exception {
    String node = cluster.node(Cluster.unique("n"));
    cluster.pod("ns", "holder29", "Running");
    RetryPolicy policy = RetryPolicy.builder().retryTimeout(Duration.ofMillis(300)).build();
    KubernetesLockStack first =
        KubernetesLockStack.builder(k8s.apiClient())
            .clock(clock)
            .environment(Map.of())
            .key("a.example.com/lock")
            .retryPolicy(policy)
            .watch(false)
            .build();
    KubernetesLockStack second =
        locks(Duration.ofMinutes(5), policy, false); // hami.io/mutex.lock sorts after
    cluster.setLock(node, "2026-08-01T05:59:59Z,ns,holder29");
    k8s.resetCounters();
    Recorder rec = new Recorder();
    var acquirer =
        dev.hamilock.core.acquire.NodeLockAcquirer.create(
            LockSettings.builder().retryPolicy(policy).listener(rec).build());
    assertThatThrownBy(
            () ->
                acquirer.acquire(
                    node,
                    LockOwner.of("ns", "m"),
                    true,
                    List.of(first.nodeLock(), second.nodeLock())))
        .isInstanceOf(LockWaitTimeoutException.class)
        .hasMessageContaining("node lock contention");
    long removals = cluster.lockHistory(node).size(); // every attempt: add a/lock then remove it
    assertThat(rec.attempts.get(0)).isGreaterThanOrEqualTo(2);
    assertThat(removals).isGreaterThanOrEqualTo(2L * rec.attempts.get(0));
    assertThat(
            k8s.get("nodes", null, node)
                .orElseThrow()
                .path("metadata")
                .path("annotations")
                .has("a.example.com/lock"))
        .isFalse();
  }

  @Test
  void v30_nonContentionErrorIsReturnedAtOnce() {
    String node = cluster.node(Cluster.unique("n"));
    KubernetesLockStack l =
        locks(
            Duration.ofMinutes(5),
            RetryPolicy.builder().retryTimeout(Duration.ofSeconds(2)).build(),
            false);
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .pathMatching(".*/" + node)
            .respondStatus(500, "InternalError", "apiserver 500"));
    Recorder rec = new Recorder();
    var acquirer =
        dev.hamilock.core.acquire.NodeLockAcquirer.create(
            LockSettings.builder()
                .retryPolicy(l.settings().lock().retryPolicy())
                .listener(rec)
                .build());
    assertThatThrownBy(
            () -> acquirer.acquire(node, LockOwner.of("ns", "m"), true, List.of(l.nodeLock())))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE);
              assertThat(e.getMessage()).contains("apiserver 500");
            });
    assertThat(rec.attempts).containsExactly(1);
  }

  @Test
  void v31_thirdBackendFailsAndTheFirstTwoAreReleasedInReverseOrder() throws Exception {
    String node = cluster.node(Cluster.unique("n"));
    List<String> calls = Collections.synchronizedList(new ArrayList<>());
    KubernetesLockStack b1 =
        backend("backend1.example.com/lock", calls, OwnerLiveness.assumeAlive());
    KubernetesLockStack b2 =
        backend("backend2.example.com/lock", calls, OwnerLiveness.assumeAlive());
    KubernetesLockStack b3 =
        backend(
            "backend3.example.com/lock",
            calls,
            owner -> {
              throw new LockBackendException(
                  LockBackendException.Kind.UNAVAILABLE, "backend3 liveness down", null);
            });
    k8s.mutate(
        "nodes",
        null,
        node,
        o -> {
          ((com.fasterxml.jackson.databind.node.ObjectNode) o.get("metadata").get("annotations"))
              .put("backend3.example.com/lock", "2026-08-01T05:59:59Z,ns,someone");
          return o;
        });
    var acquirer = dev.hamilock.core.acquire.NodeLockAcquirer.create(RetryPolicy.failFast());
    assertThatThrownBy(
            () ->
                acquirer.acquire(
                    node,
                    LockOwner.of("ns", "p"),
                    false,
                    List.of(b3.nodeLock(), b1.nodeLock(), b2.nodeLock())))
        .isInstanceOf(LockBackendException.class)
        .hasMessageContaining("backend3 liveness down");
    assertThat(calls)
        .containsExactly(
            "lock:backend1.example.com/lock",
            "lock:backend2.example.com/lock",
            "release:backend2.example.com/lock",
            "release:backend1.example.com/lock");
    // first backend failing: nothing released, later ones not called
    calls.clear();
    String node2 = cluster.node(Cluster.unique("n"));
    KubernetesLockStack a0 =
        backend(
            "a0.example.com/lock",
            calls,
            owner -> {
              throw new LockBackendException(
                  LockBackendException.Kind.UNAVAILABLE, "a0 down", null);
            });
    k8s.mutate(
        "nodes",
        null,
        node2,
        o -> {
          ((com.fasterxml.jackson.databind.node.ObjectNode) o.get("metadata").get("annotations"))
              .put("a0.example.com/lock", "2026-08-01T05:59:59Z,ns,someone");
          return o;
        });
    assertThatThrownBy(
            () ->
                acquirer.acquire(
                    node2,
                    LockOwner.of("ns", "p"),
                    false,
                    List.of(b1.nodeLock(), a0.nodeLock(), b2.nodeLock())))
        .hasMessageContaining("a0 down");
    assertThat(calls).isEmpty();
  }

  private KubernetesLockStack backend(String key, List<String> calls, OwnerLiveness liveness) {
    KubernetesLockStack l =
        KubernetesLockStack.builder(k8s.apiClient())
            .clock(clock)
            .environment(Map.of())
            .key(key)
            .watch(false)
            .ownerLiveness(liveness)
            .listener(
                new NodeLockListener() {
                  @Override
                  public void acquired(
                      String node, String k, LockOwner owner, AcquireOutcome outcome) {
                    calls.add("lock:" + k);
                  }

                  @Override
                  public void released(String node, String k, LockOwner owner) {
                    calls.add("release:" + k);
                  }
                })
            .build();
    opened.add(l);
    return l;
  }

  static Stream<Arguments> v32() {
    return Stream.of(
        Arguments.of("nil pod", null, false),
        Arguments.of("empty pod", new V1Pod(), false),
        Arguments.of(
            "label set",
            pod("ns", "p", Map.of("scheduling.x-k8s.io/pod-group", "my-training-job"), null),
            true),
        Arguments.of(
            "label empty",
            pod("ns", "p", Map.of("scheduling.x-k8s.io/pod-group", ""), null),
            false),
        Arguments.of(
            "annotation only",
            new V1Pod()
                .metadata(
                    new V1ObjectMeta()
                        .name("p")
                        .namespace("ns")
                        .annotations(Map.of("scheduling.x-k8s.io/pod-group", "g"))),
            false),
        Arguments.of(
            "schedulingGroup name",
            pod("ns", "p", Map.of(), new V1PodSchedulingGroup().podGroupName("my-training-job")),
            true),
        Arguments.of(
            "schedulingGroup nil name",
            pod("ns", "p", Map.of(), new V1PodSchedulingGroup()),
            false),
        Arguments.of(
            "schedulingGroup empty name",
            pod("ns", "p", Map.of(), new V1PodSchedulingGroup().podGroupName("")),
            false),
        Arguments.of(
            "both",
            pod(
                "ns",
                "p",
                Map.of("scheduling.x-k8s.io/pod-group", "g"),
                new V1PodSchedulingGroup().podGroupName("g")),
            true));
  }

  @ParameterizedTest(name = "V32 {0} ⇒ {2}")
  @MethodSource("v32")
  void v32_podGroupMembership(String name, V1Pod pod, boolean member) {
    assertThat(KubernetesLockOwners.isGangMember(pod)).isEqualTo(member);
  }

  static V1Pod pod(String ns, String name, Map<String, String> labels, V1PodSchedulingGroup group) {
    V1PodSpec spec = new V1PodSpec();
    if (group != null) {
      spec.setSchedulingGroup(group);
    }
    return new V1Pod()
        .metadata(new V1ObjectMeta().namespace(ns).name(name).labels(labels))
        .spec(spec);
  }

  /** Records the attempts of each acquire call. */
  static final class Recorder implements NodeLockListener {
    final List<Integer> attempts = Collections.synchronizedList(new ArrayList<>());

    @Override
    public void waited(String node, LockOwner owner, Duration waited, int n, boolean acquired) {
      attempts.add(n);
    }
  }

  static Optional<String> none() {
    return Optional.empty();
  }
}
