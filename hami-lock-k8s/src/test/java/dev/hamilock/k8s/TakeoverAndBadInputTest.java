package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.k8s.lock.PodOwnerLiveness;
import dev.hamilock.testkit.FaultRule;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Expired and dangling takeover, liveness errors, malformed values, unknown fields. */
class TakeoverAndBadInputTest extends OnSharedEmulator {

  static final Instant NOW = Instant.parse("2026-08-01T06:00:00Z");
  TestClock clock;
  KubernetesLockStack locks;
  NodeLock lock;
  String node;
  final LockOwner me = LockOwner.of("ns", "me");

  @BeforeEach
  void setUp() {
    k8s.clearFaults();
    k8s.setInjectUnknownFields(false);
    clock = new TestClock(NOW);
    locks =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .clock(clock)
            .environment(Map.of())
            .retryPolicy(RetryPolicy.failFast())
            .watch(false)
            .requestTimeout(Duration.ofSeconds(2))
            .build();
    lock = locks.nodeLock();
    node = cluster.node(Cluster.unique("t"));
  }

  @AfterEach
  void tearDown() {
    locks.close();
  }

  /**
   * The PATCH is applied but its answer is lost, and every re-read fails too: the store cannot tell
   * and says UNAVAILABLE. The acquire loop must not leave that possibly written lock on the node
   * (it would block the node, HAMi's pods included, until expiry): its rollback releases it by
   * exact owner once the API answers again.
   */
  @Test
  void anAcquireWhoseOutcomeStaysUnknownLeavesNoLockBehind() {
    k8s.addFault(
        FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
    k8s.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("nodes")
            .times(dev.hamilock.core.annotation.AnnotationLockStore.DEFAULT_MAX_ATTEMPTS)
            .respondStatus(503, "ServiceUnavailable", "etcd unavailable"));

    assertThatThrownBy(() -> locks.acquirer().acquire(node, me, false, java.util.List.of(lock)))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE));

    assertThat(cluster.lock(node)).isEmpty();
    assertThat(cluster.lockHistory(node).stream().filter(java.util.Optional::isPresent).count())
        .as("the lost write was applied once")
        .isEqualTo(1);
  }

  @Test
  void expiredLockOfALivePodIsTakenOverOnlyAfterTheTimeout() throws Exception {
    cluster.pod("ns", "old-holder", "Running");
    cluster.setLock(node, "2026-08-01T06:00:00Z,ns,old-holder");
    assertThatThrownBy(() -> lock.acquire(node, me))
        .as("first sight")
        .isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(5));
    assertThatThrownBy(() -> lock.acquire(node, me)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofSeconds(1));
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
    assertThat(cluster.lock(node)).contains("2026-08-01T06:05:01Z,ns,me");
  }

  @ParameterizedTest(name = "owner {0} ⇒ dangling takeover")
  @ValueSource(strings = {"Succeeded", "Failed", "deleted", "terminating"})
  void danglingOwnerIsTakenOverAtOnce(String state) throws Exception {
    String owner = Cluster.unique("owner");
    switch (state) {
      case "deleted" -> {}
      case "terminating" -> cluster.terminatingPod("ns", owner);
      default -> cluster.pod("ns", owner, state);
    }
    cluster.setLock(node, "2026-08-01T05:59:59Z,ns," + owner);
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.TOOK_OVER_DANGLING);
    assertThat(cluster.lock(node)).contains("2026-08-01T06:00:00Z,ns,me");
  }

  @Test
  void livenessChecksRecognisePhasesUidAndDeletion() throws Exception {
    PodOwnerLiveness liveness = PodOwnerLiveness.create(k8s.apiClient(), Duration.ofSeconds(2), 3);
    String running = Cluster.unique("running");
    String uid = cluster.pod("ns", running, "Running").path("metadata").path("uid").asText();
    assertThat(liveness.check(LockOwner.of("ns", running))).isEqualTo(OwnerLiveness.State.ALIVE);
    assertThat(liveness.check(LockOwner.of("ns", running, uid)))
        .isEqualTo(OwnerLiveness.State.ALIVE);
    assertThat(liveness.check(LockOwner.of("ns", running, "other-uid")))
        .isEqualTo(OwnerLiveness.State.NOT_FOUND);
    assertThat(liveness.check(LockOwner.of("ns", Cluster.unique("nope"))))
        .isEqualTo(OwnerLiveness.State.NOT_FOUND);
    String term = Cluster.unique("term");
    cluster.terminatingPod("ns", term);
    assertThat(liveness.check(LockOwner.of("ns", term))).isEqualTo(OwnerLiveness.State.TERMINATING);
    String done = Cluster.unique("done");
    cluster.pod("ns", done, "Succeeded");
    k8s.setInjectUnknownFields(true);
    assertThat(liveness.check(LockOwner.of("ns", done))).isEqualTo(OwnerLiveness.State.SUCCEEDED);
  }

  @Test
  void livenessLookupFailingWith500IsAnErrorAndNoTakeover() {
    String owner = Cluster.unique("owner");
    cluster.pod("ns", owner, "Running");
    String value = "2026-08-01T05:59:59Z,ns," + owner;
    cluster.setLock(node, value);
    k8s.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("pods")
            .respondStatus(500, "InternalError", "apiserver 500"));
    assertThatThrownBy(() -> lock.acquire(node, me))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE);
              assertThat(e.getMessage()).contains(value).contains("apiserver 500");
            });
    assertThat(cluster.lock(node)).contains(value);
  }

  @Test
  void livenessLookupForbiddenIsRejectedNotGone() {
    String value = "2026-08-01T05:59:59Z,ns," + Cluster.unique("owner");
    cluster.setLock(node, value);
    k8s.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("pods")
            .respondStatus(403, "Forbidden", "no pods for you"));
    assertThatThrownBy(() -> lock.acquire(node, me))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.REJECTED));
    assertThat(cluster.lock(node)).contains(value);
  }

  @ParameterizedTest(name = "malformed \"{0}\" ⇒ typed contention, freed after one lock timeout")
  @ValueSource(strings = {"lock", "a,b", "junk,foo,ns,name", "", "bad,ns,pod"})
  void malformedValuesAreTypedContentionAndBlockAtMostOneLockTimeout(String value)
      throws Exception {
    cluster.setLock(node, value);
    assertThatThrownBy(() -> lock.acquire(node, me))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> {
              assertThat(e.holderValue()).contains(value);
              assertThat(e.getMessage())
                  .contains("\"" + value + "\"")
                  .endsWith("node lock contention");
            });
    assertThat(lock.release(node, me)).isFalse();
    assertThat(cluster.lock(node)).contains(value);
    clock.advance(Duration.ofMinutes(5));
    assertThatThrownBy(() -> lock.acquire(node, me)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofSeconds(1));
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
    assertThat(lock.release(node, me)).isTrue();
    assertThat(cluster.lock(node)).isEmpty();
  }

  @Test
  void unknownFieldsNeverBreakAcquireReleaseOrLiveness() throws Exception {
    k8s.setInjectUnknownFields(true);
    String owner = Cluster.unique("gone");
    cluster.setLock(node, "2026-08-01T05:59:59Z,ns," + owner);
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.TOOK_OVER_DANGLING);
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.REENTERED);
    assertThat(lock.read(node)).hasValueSatisfying(r -> assertThat(r.owner()).contains(me));
    assertThat(lock.release(node, me)).isTrue();
    assertThat(lock.acquire(node, me)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(lock.release(node, me)).isTrue();
    assertThat(cluster.lock(node)).isEmpty();
  }
}
