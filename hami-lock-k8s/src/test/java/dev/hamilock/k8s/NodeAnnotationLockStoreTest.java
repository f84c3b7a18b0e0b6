package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.testkit.FaultRule;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The one-request store against the emulator: requests, fallbacks, faults, strictness. */
class NodeAnnotationLockStoreTest extends OnSharedEmulator {

    NodeAnnotationLockStore store;
    String node;

    @BeforeEach
    void fresh() {
        k8s.clearFaults();
        k8s.setInjectUnknownFields(false);
        store = NodeAnnotationLockStore.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .requestTimeout(Duration.ofSeconds(2)).build();
        node = cluster.node(Cluster.unique("store"));
        k8s.resetCounters();
    }

    @Test
    void pointerEscapesTildeBeforeSlash() {
        assertThat(NodeAnnotationLockStore.annotationPointer("hami.io/mutex.lock"))
                .isEqualTo("/metadata/annotations/hami.io~1mutex.lock");
        assertThat(NodeAnnotationLockStore.annotationPointer("a~1/b")).isEqualTo("/metadata/annotations/a~01~1b");
    }

    @Test
    void createIsOnePatchAndFailsWhenAnyValueIsPresent() throws Exception {
        assertThat(store.createIfAbsent(node, Cluster.KEY, "v1")).isTrue();
        assertThat(k8s.totalRequests()).isEqualTo(1);
        assertThat(cluster.patches()).isEqualTo(1);
        assertThat(cluster.lock(node)).contains("v1");
        assertThat(store.createIfAbsent(node, Cluster.KEY, "v1")).isFalse();
        assertThat(store.createIfAbsent(node, Cluster.KEY, "v2")).isFalse();
        assertThat(cluster.lock(node)).contains("v1");
    }

    @Test
    void keyWithSlashRoundTrips() throws Exception {
        String key = "example.com/we.ird_key-1"; // the '/' travels as ~1 in the JSON pointer
        assertThat(store.createIfAbsent(node, key, "x")).isTrue();
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
                .isInstanceOfSatisfying(LockBackendException.class,
                        e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.REJECTED))
                .hasMessageContaining(key).hasMessageContaining("metadata.annotations");
    }

    @Test
    void contendedCreateAnswersTheFollowingReadFromItsOwnGet() throws Exception {
        cluster.setLock(node, "theirs");
        k8s.resetCounters();
        assertThat(store.createIfAbsent(node, Cluster.KEY, "mine")).isFalse();
        assertThat(store.read(node, Cluster.KEY)).contains("theirs");
        assertThat(cluster.lockRequests()).isEqualTo(2);
        // a second read is a real GET again
        assertThat(store.read(node, Cluster.KEY)).contains("theirs");
        assertThat(cluster.lockRequests()).isEqualTo(3);
    }

    @Test
    void replaceAndDeleteAreConditionalOnTheExactValue() throws Exception {
        cluster.setLock(node, "old");
        k8s.resetCounters();
        assertThat(store.replaceIfEquals(node, Cluster.KEY, "other", "new")).isFalse();
        assertThat(store.deleteIfEquals(node, Cluster.KEY, "other")).isFalse();
        assertThat(cluster.lock(node)).contains("old");
        assertThat(store.replaceIfEquals(node, Cluster.KEY, "old", "new")).isTrue();
        assertThat(store.deleteIfEquals(node, Cluster.KEY, "new")).isTrue();
        assertThat(cluster.lock(node)).isEmpty();
        assertThat(cluster.patches()).isEqualTo(4);
        assertThat(k8s.totalRequests()).isEqualTo(4);
        assertThat(store.deleteIfEquals(node, Cluster.KEY, "new")).isFalse();
        assertThat(store.replaceIfEquals(node, Cluster.KEY, "new", "x")).isFalse();
    }

    @Test
    void nodeWithoutAnnotationsMapFallsBackToResourceVersionMergePatch() throws Exception {
        String bare = cluster.bareNode(Cluster.unique("bare"));
        k8s.resetCounters();
        assertThat(store.createIfAbsent(bare, Cluster.KEY, "v")).isTrue();
        assertThat(cluster.lock(bare)).contains("v");
        assertThat(k8s.requestCount("patch", "nodes")).isEqualTo(2);
        assertThat(k8s.requestCount("get", "nodes")).isEqualTo(1);
        // replace/delete on a bare node simply fail their test
        String bare2 = cluster.bareNode(Cluster.unique("bare"));
        assertThat(store.replaceIfEquals(bare2, Cluster.KEY, "a", "b")).isFalse();
        assertThat(store.deleteIfEquals(bare2, Cluster.KEY, "a")).isFalse();
        assertThat(cluster.lock(bare2)).isEmpty();
    }

    @Test
    void mergePatchConflictIsReReadAndDecidedAgain() throws Exception {
        String bare = cluster.bareNode(Cluster.unique("bare"));
        // the merge patch (2nd patch) meets a node changed under it: 409, then everything again
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").pathMatching(".*/" + bare).times(1)
                .invoke(req -> { }));
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").pathMatching(".*/" + bare).times(1)
                .invoke(req -> k8s.mutate("nodes", null, bare, o -> {
                    ((com.fasterxml.jackson.databind.node.ObjectNode) o.get("metadata")).putObject("labels")
                            .put("changed", "yes");
                    return o;
                })));
        k8s.resetCounters();
        assertThat(store.createIfAbsent(bare, Cluster.KEY, "v")).isTrue();
        assertThat(cluster.lock(bare)).contains("v");
        assertThat(k8s.requestCount("patch", "nodes")).isEqualTo(4); // 422, 409, 422, 200
        assertThat(k8s.requestCount("get", "nodes")).isEqualTo(2);
    }

    @Test
    void missingNodeIsNodeNotFoundForEveryOperation() {
        String absent = Cluster.unique("absent");
        for (ThrowingOp op : new ThrowingOp[] {
                () -> store.read(absent, Cluster.KEY),
                () -> store.createIfAbsent(absent, Cluster.KEY, "v"),
                () -> store.replaceIfEquals(absent, Cluster.KEY, "a", "b"),
                () -> store.deleteIfEquals(absent, Cluster.KEY, "a")}) {
            assertThatThrownBy(op::run).isInstanceOfSatisfying(LockBackendException.class,
                    e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.NODE_NOT_FOUND));
        }
    }

    @Test
    void lostAnswerOfAnAppliedCreateIsResolvedByReReading() throws Exception {
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
        assertThat(store.createIfAbsent(node, Cluster.KEY, "mine")).isTrue();
        assertThat(cluster.lock(node)).contains("mine");
        assertThat(cluster.patches()).isEqualTo(1);
        assertThat(k8s.requestCount("get", "nodes")).isEqualTo(1);
    }

    @Test
    void lostAnswerOfAnAppliedCreateRacingAnotherWriterIsFalse() throws Exception {
        // applied, answer lost, then someone else's value (a takeover) before our re-read
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
        k8s.addFault(FaultRule.matching().verb("get").resource("nodes").times(1)
                .invoke(r -> cluster.setLock(node, "theirs")));
        assertThat(store.createIfAbsent(node, Cluster.KEY, "mine")).isFalse();
        assertThat(store.read(node, Cluster.KEY)).contains("theirs");
    }

    @Test
    void lostAnswersOfReplaceAndDeleteAreResolvedByReReading() throws Exception {
        cluster.setLock(node, "old");
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
        assertThat(store.replaceIfEquals(node, Cluster.KEY, "old", "new")).isTrue();
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").times(1).dropResponseAfterApply());
        assertThat(store.deleteIfEquals(node, Cluster.KEY, "new")).isTrue();
        assertThat(cluster.lock(node)).isEmpty();
        assertThat(cluster.patches()).isEqualTo(2);
    }

    @Test
    void serverErrorsAndThrottlingAreRetriedAfterCheckingNothingWasApplied() throws Exception {
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").times(1)
                .respondStatus(500, "InternalError", "etcd leader changed"));
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").times(1)
                .respondStatus(429, "TooManyRequests", "slow down"));
        assertThat(store.createIfAbsent(node, Cluster.KEY, "mine")).isTrue();
        assertThat(cluster.patches()).isEqualTo(3);
        assertThat(k8s.requestCount("get", "nodes")).isEqualTo(1); // only the 500 needed a re-read
        assertThat(cluster.lock(node)).contains("mine");
    }

    @Test
    void persistentServerErrorIsUnavailableAndNeverUnchecked() {
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes")
                .respondStatus(500, "InternalError", "apiserver 500"));
        assertThatThrownBy(() -> store.createIfAbsent(node, Cluster.KEY, "mine"))
                .isInstanceOfSatisfying(LockBackendException.class, e -> {
                    assertThat(e.kind()).isEqualTo(LockBackendException.Kind.UNAVAILABLE);
                    assertThat(e.isRetryable()).isTrue();
                    assertThat(e.getMessage()).contains(node).contains("mine");
                });
        assertThat(cluster.patches()).isEqualTo(NodeAnnotationLockStore.DEFAULT_MAX_ATTEMPTS);
        assertThat(cluster.lock(node)).isEmpty();
    }

    @Test
    void forbiddenIsRejected() {
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes")
                .respondStatus(403, "Forbidden", "nodes is forbidden"));
        assertThatThrownBy(() -> store.deleteIfEquals(node, Cluster.KEY, "x"))
                .isInstanceOfSatisfying(LockBackendException.class,
                        e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.REJECTED));
        assertThat(cluster.patches()).isEqualTo(1);
    }

    /**
     * A 422 that is not a failed {@code test} — the patched node failed validation (patch.go's
     * failed-apply 422 has empty details; {@code NewInvalid} names the object and the field) —
     * is a refusal, not contention: no GET-and-guess, no contention rounds, no gang retries.
     */
    @Test
    void aValidationFailureIs422ButRejectedNotContention() {
        String invalid = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                + "\"message\":\"Node \\\"" + node + "\\\" is invalid: metadata.annotations: Too long: must have at most"
                + " 262144 bytes\",\"reason\":\"Invalid\",\"details\":{\"name\":\"" + node + "\",\"kind\":\"Node\","
                + "\"causes\":[{\"reason\":\"FieldValueTooLong\",\"message\":\"Too long: must have at most 262144"
                + " bytes\",\"field\":\"metadata.annotations\"}]},\"code\":422}";
        cluster.setLock(node, "mine");
        k8s.resetCounters();
        k8s.addFault(FaultRule.matching().verb("patch").resource("nodes").respond(422, invalid));
        for (ThrowingOp op : new ThrowingOp[] {
                () -> store.createIfAbsent(node, "example.com/other.lock", "v"),
                () -> store.replaceIfEquals(node, Cluster.KEY, "mine", "new"),
                () -> store.deleteIfEquals(node, Cluster.KEY, "mine")}) {
            assertThatThrownBy(op::run).isInstanceOfSatisfying(LockBackendException.class, e -> {
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
        NodeAnnotationLockStore quick = NodeAnnotationLockStore.builder(k8s.apiClient())
                .requestTimeout(Duration.ofMillis(300)).build();
        cluster.setLock(node, "v");
        k8s.addFault(FaultRule.matching().verb("get").resource("nodes").times(1).delay(Duration.ofMillis(1500)));
        assertThat(quick.read(node, Cluster.KEY)).contains("v");
        assertThat(k8s.requestCount("get", "nodes")).isEqualTo(2);
    }

    @Test
    void unknownFieldsInAnswersAreTolerated() throws Exception {
        k8s.setInjectUnknownFields(true);
        assertThat(store.createIfAbsent(node, Cluster.KEY, "v")).isTrue();
        assertThat(store.createIfAbsent(node, Cluster.KEY, "w")).isFalse();
        assertThat(store.read(node, Cluster.KEY)).contains("v");
        assertThat(store.read(node, Cluster.KEY)).contains("v");
        assertThat(store.replaceIfEquals(node, Cluster.KEY, "v", "w")).isTrue();
        assertThat(store.deleteIfEquals(node, Cluster.KEY, "w")).isTrue();
        assertThat(store.read(node, Cluster.KEY)).isEqualTo(Optional.empty());
    }

    @Test
    void interruptedCallerGetsInterruptedKindAndKeepsTheFlag() {
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> store.createIfAbsent(node, Cluster.KEY, "v"))
                    .isInstanceOfSatisfying(LockBackendException.class,
                            e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.INTERRUPTED));
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void builderRejectsBadSettingsNamingThem() {
        assertThatThrownBy(() -> NodeAnnotationLockStore.builder(null)).hasMessageContaining("apiClient");
        assertThatThrownBy(() -> NodeAnnotationLockStore.builder(k8s.apiClient()).requestTimeout(Duration.ZERO).build())
                .hasMessageContaining("requestTimeout");
        assertThatThrownBy(() -> NodeAnnotationLockStore.builder(k8s.apiClient()).maxAttempts(0).build())
                .hasMessageContaining("maxAttempts");
    }

    interface ThrowingOp {
        Object run() throws Exception;
    }
}
