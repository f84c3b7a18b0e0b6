package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.annotation.AnnotationLockStore;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.testkit.FaultRule;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The one-request store against the emulator: requests, fallbacks, faults, strictness. */
class NodeAnnotationLockStoreTest extends OnSharedEmulator {

  AnnotationLockStore store;
  String node;

  @BeforeEach
  void fresh() {
    k8s.clearFaults();
    k8s.setInjectUnknownFields(false);
    store =
        NodeAnnotationLockStore.builder(
                k8s.newApiClient(Duration.ofSeconds(5)), Duration.ofSeconds(2))
            .build();
    node = cluster.node(Cluster.unique("store"));
    k8s.resetCounters();
  }

  @Test
  void createIsOnePatchAndFailsWhenAnyValueIsPresent() throws Exception {
    assertThat(store.createIfAbsent(node, Cluster.KEY, "v1")).isEqualTo(CasResult.written());
    assertThat(k8s.totalRequests()).isEqualTo(1);
    assertThat(cluster.patches()).isEqualTo(1);
    assertThat(cluster.lock(node)).contains("v1");
    assertThat(store.createIfAbsent(node, Cluster.KEY, "v1")).isEqualTo(CasResult.found("v1"));
    assertThat(store.createIfAbsent(node, Cluster.KEY, "v2")).isEqualTo(CasResult.found("v1"));
    assertThat(cluster.lock(node)).contains("v1");
  }

  @Test
  void keyWithSlashRoundTrips() throws Exception {
    String key = "example.com/we.ird_key-1"; // the '/' travels as ~1 in the JSON pointer
    assertThat(store.createIfAbsent(node, key, "x").isWritten()).isTrue();
    assertThat(store.read(node, key)).contains("x");
    assertThat(store.deleteIfEquals(node, key, "x")).isTrue();
    assertThat(store.read(node, key)).isEmpty();
  }

  @Test
  void aKeyKubernetesRefusesIsARejectionNamingTheKey() {
    // '~' and a second '/' make no valid annotation key: kube-apiserver (and the emulator since the
    // differential conformance run, CONFORMANCE.md) answers 422 naming metadata.annotations
    String key = "example.com/we~ird/key";
    assertThatThrownBy(() -> store.createIfAbsent(node, key, "x"))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.REJECTED))
        .hasMessageContaining(key)
        .hasMessageContaining("metadata.annotations");
  }

  @Test
  void contendedCreateReturnsTheHolderAsWitnessFromOneGet() throws Exception {
    cluster.setLock(node, "theirs");
    k8s.resetCounters();
    assertThat(store.createIfAbsent(node, Cluster.KEY, "mine"))
        .isEqualTo(CasResult.found("theirs"));
    assertThat(cluster.lockRequests()).isEqualTo(2); // PATCH 422, GET
    // nothing is carried to the next call: a read on the same thread is a real GET
    assertThat(store.read(node, Cluster.KEY)).contains("theirs");
    assertThat(cluster.lockRequests()).isEqualTo(3);
  }

  @Test
  void aWatchedViewShowingAnotherValueIsTheWitnessWithoutAGet() throws Exception {
    Map<String, String> view = new java.util.concurrent.ConcurrentHashMap<>();
    AnnotationLockStore watched =
        NodeAnnotationLockStore.builder(k8s.apiClient(), Duration.ofSeconds(10))
            .watchedLockValues(Cluster.KEY, n -> Optional.ofNullable(view.get(n)))
            .build();
    cluster.setLock(node, "theirs");
    view.put(node, "theirs");
    k8s.resetCounters();
    assertThat(watched.createIfAbsent(node, Cluster.KEY, "mine"))
        .isEqualTo(CasResult.found("theirs"));
    assertThat(cluster.lockRequests()).isEqualTo(1); // PATCH 422 only
    // another key is not covered by the view: one GET
    assertThat(store.createIfAbsent(node, "example.com/other.lock", "x").isWritten()).isTrue();
    k8s.resetCounters();
    assertThat(watched.createIfAbsent(node, "example.com/other.lock", "mine"))
        .isEqualTo(CasResult.found("x"));
    assertThat(cluster.lockRequests()).isEqualTo(2);
  }

  @Test
  void aRefusedReplaceReadsItsWitnessEvenWhenTheWatchedViewShowsOne() throws Exception {
    Map<String, String> view = new java.util.concurrent.ConcurrentHashMap<>();
    AnnotationLockStore watched =
        NodeAnnotationLockStore.builder(k8s.apiClient(), Duration.ofSeconds(10))
            .watchedLockValues(Cluster.KEY, n -> Optional.ofNullable(view.get(n)))
            .build();
    cluster.setLock(node, "now");
    view.put(node, "stale"); // the view lags: the caller's expected value came from it
    k8s.resetCounters();
    assertThat(watched.replaceIfEquals(node, Cluster.KEY, "stale", "mine"))
        .isEqualTo(CasResult.found("now"));
    assertThat(k8s.requestCount("patch", "nodes")).isEqualTo(1);
    assertThat(k8s.requestCount("get", "nodes")).isEqualTo(1);
    // and the next contended create still takes the view (no per-thread memory of the refusal):
    // a stale witness costs at most that one more refused replace, never a wrong decision
    k8s.resetCounters();
    assertThat(watched.createIfAbsent(node, Cluster.KEY, "mine"))
        .isEqualTo(CasResult.found("stale"));
    assertThat(cluster.lockRequests()).isEqualTo(1);
    assertThat(cluster.lock(node)).contains("now");
  }

  @Test
  void aWatchedViewNeedsAKeyAndAFunction() {
    assertThatThrownBy(
            () ->
                NodeAnnotationLockStore.builder(k8s.apiClient(), Duration.ofSeconds(10))
                    .watchedLockValues(" ", n -> Optional.empty())
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(
            () ->
                NodeAnnotationLockStore.builder(k8s.apiClient(), Duration.ofSeconds(10))
                    .watchedLockValues(Cluster.KEY, null)
                    .build())
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("function");
  }

  @Test
  void replaceAndDeleteAreConditionalOnTheExactValue() throws Exception {
    cluster.setLock(node, "old");
    k8s.resetCounters();
    assertThat(store.replaceIfEquals(node, Cluster.KEY, "other", "new"))
        .isEqualTo(CasResult.found("old"));
    assertThat(store.deleteIfEquals(node, Cluster.KEY, "other")).isFalse();
    assertThat(cluster.lock(node)).contains("old");
    assertThat(store.replaceIfEquals(node, Cluster.KEY, "old", "new"))
        .isEqualTo(CasResult.written());
    assertThat(store.deleteIfEquals(node, Cluster.KEY, "new")).isTrue();
    assertThat(cluster.lock(node)).isEmpty();
    assertThat(cluster.patches()).isEqualTo(4);
    // the refused replace read its witness (1 GET); the refused delete needs none
    assertThat(k8s.totalRequests()).isEqualTo(5);
    assertThat(store.deleteIfEquals(node, Cluster.KEY, "new")).isFalse();
    assertThat(store.replaceIfEquals(node, Cluster.KEY, "new", "x"))
        .isEqualTo(CasResult.notWritten(Optional.empty()));
  }

  @Test
  void nodeWithoutAnnotationsMapFallsBackToResourceVersionMergePatch() throws Exception {
    String bare = cluster.bareNode(Cluster.unique("bare"));
    k8s.resetCounters();
    assertThat(store.createIfAbsent(bare, Cluster.KEY, "v")).isEqualTo(CasResult.written());
    assertThat(cluster.lock(bare)).contains("v");
    assertThat(k8s.requestCount("patch", "nodes")).isEqualTo(2);
    assertThat(k8s.requestCount("get", "nodes")).isEqualTo(1);
    // replace/delete on a bare node simply fail their test
    String bare2 = cluster.bareNode(Cluster.unique("bare"));
    assertThat(store.replaceIfEquals(bare2, Cluster.KEY, "a", "b"))
        .isEqualTo(CasResult.notWritten(Optional.empty()));
    assertThat(store.deleteIfEquals(bare2, Cluster.KEY, "a")).isFalse();
    assertThat(cluster.lock(bare2)).isEmpty();
  }

  @Test
  void mergePatchConflictIsReReadAndDecidedAgain() throws Exception {
    String bare = cluster.bareNode(Cluster.unique("bare"));
    // the merge patch (2nd patch) meets a node changed under it: 409, then everything again
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .pathMatching(".*/" + bare)
            .times(1)
            .invoke(req -> {}));
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .pathMatching(".*/" + bare)
            .times(1)
            .invoke(
                req ->
                    k8s.mutate(
                        "nodes",
                        null,
                        bare,
                        o -> {
                          ((com.fasterxml.jackson.databind.node.ObjectNode) o.get("metadata"))
                              .putObject("labels")
                              .put("changed", "yes");
                          return o;
                        })));
    k8s.resetCounters();
    assertThat(store.createIfAbsent(bare, Cluster.KEY, "v")).isEqualTo(CasResult.written());
    assertThat(cluster.lock(bare)).contains("v");
    assertThat(k8s.requestCount("patch", "nodes")).isEqualTo(4); // 422, 409, 422, 200
    assertThat(k8s.requestCount("get", "nodes")).isEqualTo(2);
  }

  @Test
  void missingNodeIsNodeNotFoundForEveryOperation() {
    String absent = Cluster.unique("absent");
    for (ThrowingOp op :
        new ThrowingOp[] {
          () -> store.read(absent, Cluster.KEY),
          () -> store.createIfAbsent(absent, Cluster.KEY, "v"),
          () -> store.replaceIfEquals(absent, Cluster.KEY, "a", "b"),
          () -> store.deleteIfEquals(absent, Cluster.KEY, "a")
        }) {
      assertThatThrownBy(op::run)
          .isInstanceOfSatisfying(
              LockBackendException.class,
              e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.NODE_NOT_FOUND));
    }
  }

  @Test
  void lostAnswerOfAnAppliedCreateIsResolvedByReReading() throws Exception {
    k8s.addFault(
        FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
    assertThat(store.createIfAbsent(node, Cluster.KEY, "mine")).isEqualTo(CasResult.written());
    assertThat(cluster.lock(node)).contains("mine");
    assertThat(cluster.patches()).isEqualTo(1);
    assertThat(k8s.requestCount("get", "nodes")).isEqualTo(1);
  }

  @Test
  void lostAnswerOfAnAppliedCreateRacingAnotherWriterIsNotWrittenWithTheirValue() throws Exception {
    // applied, answer lost, then someone else's value (a takeover) before our re-read
    k8s.addFault(
        FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
    k8s.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("nodes")
            .times(1)
            .invoke(r -> cluster.setLock(node, "theirs")));
    k8s.resetCounters();
    assertThat(store.createIfAbsent(node, Cluster.KEY, "mine"))
        .isEqualTo(CasResult.found("theirs"));
    assertThat(k8s.requestCount("get", "nodes")).isEqualTo(1); // the re-read is the witness
  }

  @Test
  void lostAnswersOfReplaceAndDeleteAreResolvedByReReading() throws Exception {
    cluster.setLock(node, "old");
    k8s.addFault(
        FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
    assertThat(store.replaceIfEquals(node, Cluster.KEY, "old", "new"))
        .isEqualTo(CasResult.written());
    k8s.addFault(
        FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
    assertThat(store.deleteIfEquals(node, Cluster.KEY, "new")).isTrue();
    assertThat(cluster.lock(node)).isEmpty();
    assertThat(cluster.patches()).isEqualTo(2);
  }

  @Test
  void serverErrorsAndThrottlingAreRetriedAfterCheckingNothingWasApplied() throws Exception {
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(1)
            .respondStatus(500, "InternalError", "etcd leader changed"));
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .times(1)
            .respondStatus(429, "TooManyRequests", "slow down"));
    assertThat(store.createIfAbsent(node, Cluster.KEY, "mine")).isEqualTo(CasResult.written());
    assertThat(cluster.patches()).isEqualTo(3);
    assertThat(k8s.requestCount("get", "nodes")).isEqualTo(1); // only the 500 needed a re-read
    assertThat(cluster.lock(node)).contains("mine");
  }

  @Test
  void persistentServerErrorIsUnavailableAndNeverUnchecked() {
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .respondStatus(500, "InternalError", "apiserver 500"));
    assertThatThrownBy(() -> store.createIfAbsent(node, Cluster.KEY, "mine"))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> {
              assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE);
              assertThat(e.isRetryable()).isTrue();
              assertThat(e.getMessage()).contains(node).contains("mine");
              // the last answer's status and exception stay on the error (found by a new-user run:
              // the status was lost once the retries ran out)
              assertThat(e.httpStatus()).hasValue(500);
              assertThat(e.getCause())
                  .isInstanceOf(io.kubernetes.client.openapi.ApiException.class);
            });
    assertThat(cluster.patches())
        .isEqualTo(dev.hamilock.core.annotation.AnnotationLockStore.DEFAULT_MAX_ATTEMPTS);
    assertThat(cluster.lock(node)).isEmpty();
  }

  @Test
  void forbiddenIsRejected() {
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("nodes")
            .respondStatus(403, "Forbidden", "nodes is forbidden"));
    assertThatThrownBy(() -> store.deleteIfEquals(node, Cluster.KEY, "x"))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.REJECTED));
    assertThat(cluster.patches()).isEqualTo(1);
  }

  /**
   * A 422 that is not a failed {@code test} — the patched node failed validation (patch.go's
   * failed-apply 422 has empty details; {@code NewInvalid} names the object and the field) — is a
   * refusal, not contention: no GET-and-guess, no contention rounds, no gang retries.
   */
  @Test
  void aValidationFailureIs422ButRejectedNotContention() {
    String invalid =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
            + "\"message\":\"Node \\\""
            + node
            + "\\\" is invalid: metadata.annotations: Too long: must have at most"
            + " 262144 bytes\",\"reason\":\"Invalid\",\"details\":{\"name\":\""
            + node
            + "\",\"kind\":\"Node\","
            + "\"causes\":[{\"reason\":\"FieldValueTooLong\",\"message\":\"Too long: must have at most 262144"
            + " bytes\",\"field\":\"metadata.annotations\"}]},\"code\":422}";
    cluster.setLock(node, "mine");
    k8s.resetCounters();
    k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").respond(422, invalid));
    for (ThrowingOp op :
        new ThrowingOp[] {
          () -> store.createIfAbsent(node, "example.com/other.lock", "v"),
          () -> store.replaceIfEquals(node, Cluster.KEY, "mine", "new"),
          () -> store.deleteIfEquals(node, Cluster.KEY, "mine")
        }) {
      assertThatThrownBy(op::run)
          .isInstanceOfSatisfying(
              LockBackendException.class,
              e -> {
                assertThat(e.kind()).isEqualTo(LockBackendException.Kind.REJECTED);
                assertThat(e.getMessage()).contains("Too long");
              });
    }
    assertThat(cluster.patches()).isEqualTo(3);
    assertThat(k8s.requestCount("get", "nodes")).isZero();
    assertThat(cluster.lock(node)).contains("mine");
  }

  @Test
  void slowReadTimesOutAndIsRetried() throws Exception {
    AnnotationLockStore quick =
        NodeAnnotationLockStore.builder(k8s.apiClient(), Duration.ofMillis(300)).build();
    cluster.setLock(node, "v");
    k8s.addFault(
        FaultRule.matching().verb("get").resource("nodes").times(1).delay(Duration.ofMillis(1500)));
    assertThat(quick.read(node, Cluster.KEY)).contains("v");
    assertThat(k8s.requestCount("get", "nodes")).isEqualTo(2);
  }

  @Test
  void unknownFieldsInAnswersAreTolerated() throws Exception {
    k8s.setInjectUnknownFields(true);
    assertThat(store.createIfAbsent(node, Cluster.KEY, "v")).isEqualTo(CasResult.written());
    assertThat(store.createIfAbsent(node, Cluster.KEY, "w")).isEqualTo(CasResult.found("v"));
    assertThat(store.read(node, Cluster.KEY)).contains("v");
    assertThat(store.replaceIfEquals(node, Cluster.KEY, "w", "x")).isEqualTo(CasResult.found("v"));
    assertThat(store.replaceIfEquals(node, Cluster.KEY, "v", "w")).isEqualTo(CasResult.written());
    assertThat(store.deleteIfEquals(node, Cluster.KEY, "w")).isTrue();
    assertThat(store.read(node, Cluster.KEY)).isEqualTo(Optional.empty());
  }

  @Test
  void interruptedCallerGetsInterruptedKindAndKeepsTheFlag() {
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> store.createIfAbsent(node, Cluster.KEY, "v"))
          .isInstanceOfSatisfying(
              LockBackendException.class,
              e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.INTERRUPTED));
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void builderRejectsBadSettingsNamingThem() {
    assertThatThrownBy(() -> NodeAnnotationLockStore.builder(null, Duration.ofSeconds(10)))
        .hasMessageContaining("apiClient");
    assertThatThrownBy(
            () -> NodeAnnotationLockStore.builder(k8s.apiClient(), Duration.ZERO).build())
        .hasMessageContaining("requestTimeout");
    assertThatThrownBy(
            () ->
                NodeAnnotationLockStore.builder(k8s.apiClient(), Duration.ofSeconds(10))
                    .maxAttempts(0)
                    .build())
        .hasMessageContaining("maxAttempts");
  }

  interface ThrowingOp {
    Object run() throws Exception;
  }
}
