package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.testing.logs.LogCapture;
import dev.hamilock.testkit.WriteRecord;
import io.kubernetes.client.openapi.ApiException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Spec §1.5–§1.8 and §8 V09–V23, V25 (HAMi nodelock_test.go expectations) reproduced against the
 * reference over the testkit's API-server emulator.
 */
class HamiNodeLockTest {

  private static final String KEY = HamiLockValue.NODE_LOCK_KEY;
  private static final Instant NOW = Instant.parse("2026-08-01T06:00:00Z");

  private EmulatedCluster cluster;
  private final List<Duration> sleeps = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    cluster = EmulatedCluster.start();
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private HamiNodeLock lock(Duration expiry, Instant now) {
    return HamiNodeLock.builder(cluster.newClient())
        .lockExpiry(expiry)
        .clock(Clock.fixed(now, ZoneOffset.UTC))
        .sleeper(sleeps::add)
        .jitterSource(() -> 0.5)
        .build();
  }

  private HamiNodeLock lock() {
    return lock(HamiNodeLock.DEFAULT_LOCK_EXPIRY, NOW);
  }

  private Optional<String> lockValue(String node) throws ApiException {
    return cluster.nodeAnnotation(node, KEY);
  }

  @Test
  void v09FreeNodeIsLockedWithTheOwnerFormValueInOneMergePatch() throws Exception {
    cluster.createNode("worker-3", Map.of());
    HamiNodeLock lock = lock();
    cluster.resetCounters();

    lock.lockNode("worker-3", "hami-ns", "hami");

    assertThat(lockValue("worker-3")).contains("2026-08-01T06:00:00Z,hami-ns,hami");
    assertThat(cluster.requests("get", "nodes")).isEqualTo(3);
    assertThat(cluster.requests("patch", "nodes")).isEqualTo(1);
    List<WriteRecord> history = cluster.nodeHistory("worker-3");
    long readVersion = history.get(history.size() - 2).resourceVersion();
    assertThat(cluster.sentPatches())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.contentType()).startsWith("application/merge-patch+json");
              assertThat(p.body())
                  .isEqualTo(
                      "{\"metadata\":{\"annotations\":{\"hami.io/mutex.lock\":"
                          + "\"2026-08-01T06:00:00Z,hami-ns,hami\"},\"resourceVersion\":\""
                          + readVersion
                          + "\"}}");
            });
  }

  @Test
  void releaseSendsTheNullMergePatchWithTheReadVersion() throws Exception {
    cluster.createNode("worker-3", Map.of(KEY, "2026-08-01T06:00:00Z,hami-ns,hami"));
    long readVersion = cluster.nodeHistory("worker-3").get(0).resourceVersion();
    cluster.resetCounters();

    lock().releaseNodeLock("worker-3", "hami-ns", "hami", false);

    assertThat(lockValue("worker-3")).isEmpty();
    assertThat(cluster.sentPatches())
        .singleElement()
        .satisfies(
            p ->
                assertThat(p.body())
                    .isEqualTo(
                        "{\"metadata\":{\"annotations\":{\"hami.io/mutex.lock\":null},\"resourceVersion\":\""
                            + readVersion
                            + "\"}}"));
  }

  @Test
  void v09TimestampUsesTheConfiguredZone() throws Exception {
    cluster.createNode("worker-3", Map.of());
    HamiNodeLock lock =
        HamiNodeLock.builder(cluster.newClient())
            .clock(Clock.fixed(NOW, ZoneOffset.UTC))
            .timestampZone(ZoneOffset.ofHours(8))
            .build();
    lock.lockNode("worker-3", "hami-ns", "hami");
    assertThat(lockValue("worker-3")).contains("2026-08-01T14:00:00+08:00,hami-ns,hami");
  }

  @Test
  void v10AbsentNodeIsAnApiErrorNotContention() {
    HamiNodeLock lock = lock();
    assertThatThrownBy(() -> lock.lockNode("no-such-node", "hami-ns", "hami"))
        .isInstanceOf(ApiException.class)
        .satisfies(e -> assertThat(((ApiException) e).getCode()).isEqualTo(404))
        .satisfies(e -> assertThat(HamiLockContentionException.isContention(e)).isFalse());
  }

  @Test
  void v11AndV12LockOfAnExistingOtherPodIsContentionAndUntouched() throws Exception {
    cluster.createNamespace("other-ns");
    cluster.createNamespace("hami-ns");
    cluster.createPod("other-ns", "other-pod");
    cluster.createPod("hami-ns", "other-pod-same-ns");
    for (String value :
        List.of(
            "2026-08-01T05:59:00Z,other-ns,other-pod",
            "2026-08-01T05:59:00Z,hami-ns,other-pod-same-ns")) {
      cluster.createNode("n1", Map.of(KEY, value));
      assertThatThrownBy(() -> lock().lockNode("n1", "hami-ns", "hami"))
          .isInstanceOf(HamiLockContentionException.class)
          .hasMessage("node n1 has been locked within 5m0s: node lock contention");
      assertThat(lockValue("n1")).contains(value);
      cluster.deleteNode("n1");
    }
  }

  @Test
  void v13UnparsableValueIsAnErrorNotContention() throws Exception {
    cluster.createNode("n1", Map.of(KEY, "lock"));
    assertThatThrownBy(() -> lock().lockNode("n1", "hami-ns", "hami"))
        .isInstanceOf(HamiException.class)
        .hasMessageStartingWith("parsing time \"lock\"")
        .satisfies(e -> assertThat(HamiLockContentionException.isContention(e)).isFalse());
    cluster.setNodeAnnotation("n1", KEY, "junk,foo,ns,name");
    assertThatThrownBy(
            () -> lock(Duration.ZERO, NOW.plusSeconds(86_400)).lockNode("n1", "hami-ns", "hami"))
        .hasMessage("malformed lock annotation: expected 3 parts, got 4 from junk,foo,ns,name");
    assertThat(lockValue("n1")).contains("junk,foo,ns,name");
  }

  @Test
  void v14AndV15FreshLockOfALiveOwnerContendsButADanglingOneIsTakenOver() throws Exception {
    cluster.createNamespace("test-ns");
    cluster.createPod("test-ns", "test-pod");
    cluster.createNode("n1", Map.of(KEY, "2026-08-01T05:59:30Z,test-ns,test-pod"));
    assertThatThrownBy(() -> lock(Duration.ofMinutes(2), NOW).lockNode("n1", "new-ns", "new-pod"))
        .hasMessageContaining("has been locked within 2m0s");

    cluster.deletePod("test-ns", "test-pod");
    lock(Duration.ofMinutes(2), NOW).lockNode("n1", "new-ns", "new-pod");
    assertThat(lockValue("n1")).contains("2026-08-01T06:00:00Z,new-ns,new-pod");
  }

  @Test
  void v16ReentrantLockOfTheSamePodWritesNothingAndKeepsTheTimestamp() throws Exception {
    cluster.createNamespace("test-ns");
    cluster.createPod("test-ns", "multi-vendor-pod");
    cluster.createNode("n1", Map.of());
    lock(HamiNodeLock.DEFAULT_LOCK_EXPIRY, NOW).lockNode("n1", "test-ns", "multi-vendor-pod");
    cluster.resetCounters();

    lock(HamiNodeLock.DEFAULT_LOCK_EXPIRY, NOW.plusSeconds(60))
        .lockNode("n1", "test-ns", "multi-vendor-pod");

    assertThat(lockValue("n1")).contains("2026-08-01T06:00:00Z,test-ns,multi-vendor-pod");
    assertThat(cluster.requests("patch", "nodes")).isZero();
    assertThat(cluster.requests("get", "nodes")).isEqualTo(1);
  }

  @Test
  void v17ExpiryIsStrictlyGreaterAndAppliesToLiveOwnersAndLegacyValues() throws Exception {
    cluster.createNamespace("ns");
    cluster.createPod("ns", "pod-a");
    String written = "2026-08-01T06:00:00Z,ns,pod-a";
    cluster.createNode("n1", Map.of(KEY, written));
    // exactly the expiry later: not expired (strictly greater required)
    assertThatThrownBy(
            () -> lock(Duration.ofMinutes(5), NOW.plusSeconds(300)).lockNode("n1", "ns", "pod-b"))
        .isInstanceOf(HamiLockContentionException.class);
    Instant later = NOW.plusSeconds(301);
    lock(Duration.ofMinutes(5), later).lockNode("n1", "ns", "pod-b");
    assertThat(lockValue("n1")).contains("2026-08-01T06:05:01Z,ns,pod-b");

    cluster.setNodeAnnotation("n1", KEY, "2026-08-01T05:58:00Z");
    assertThatThrownBy(() -> lock().lockNode("n1", "ns", "pod-b"))
        .isInstanceOf(HamiLockContentionException.class);
    cluster.setNodeAnnotation("n1", KEY, "2026-07-03T15:35:10+08:00");
    lock().lockNode("n1", "ns", "pod-b");
    assertThat(lockValue("n1")).contains("2026-08-01T06:00:00Z,ns,pod-b");
  }

  @Test
  void v18ReleaseCases() throws Exception {
    HamiNodeLock lock = lock();
    assertThatThrownBy(() -> lock.releaseNodeLock("absent", "hami-ns", "hami", false))
        .isInstanceOf(ApiException.class);

    cluster.createNode("n1", Map.of());
    lock.releaseNodeLock("n1", "hami-ns", "hami", false);
    assertThat(lockValue("n1")).isEmpty();

    cluster.setNodeAnnotation("n1", KEY, "2026-08-01T06:00:00Z,namespace,pod");
    cluster.resetCounters();
    lock.releaseNodeLock("n1", "hami-ns", "hami", false);
    assertThat(lockValue("n1")).contains("2026-08-01T06:00:00Z,namespace,pod");
    assertThat(cluster.requests("patch", "nodes")).isZero();

    lock.releaseNodeLock("n1", "namespace", "pod", false);
    assertThat(lockValue("n1")).isEmpty();

    cluster.setNodeAnnotation("n1", KEY, "2026-07-03T15:35:10+08:00");
    lock.releaseNodeLock("n1", "hami-ns", "hami", false);
    assertThat(lockValue("n1")).isEmpty();

    cluster.setNodeAnnotation("n1", KEY, "lock-values,default,pod-gpu");
    lock.releaseNodeLock("n1", "default", "pod-gpu", false);
    assertThat(lockValue("n1")).isEmpty();

    assertThatThrownBy(() -> lock.releaseNodeLock("n1", null, "pod", false))
        .isInstanceOf(HamiException.class)
        .hasMessage("cannot release node lock: pod is nil");
  }

  @Test
  void v19ReleaseKeepsAReplacementWrittenBetweenReadAndPatch() throws Exception {
    cluster.createNode("n1", Map.of(KEY, "2026-08-01T06:00:00Z,ns,pod-a"));
    cluster.beforeNextNodePatch(
        () -> cluster.setNodeAnnotation("n1", KEY, "2026-08-01T06:00:05Z,ns,pod-b"));
    cluster.resetCounters();

    lock().releaseNodeLock("n1", "ns", "pod-a", false);

    assertThat(lockValue("n1")).contains("2026-08-01T06:00:05Z,ns,pod-b");
    assertThat(cluster.requests("patch", "nodes")).isEqualTo(1);
    assertThat(cluster.requests("get", "nodes")).isEqualTo(3);
    assertThat(sleeps).containsExactly(Duration.ofMillis(125));
  }

  @Test
  void v20ReleaseOfALegacyValueKeepsAReStampedOne() throws Exception {
    cluster.createNode("n1", Map.of(KEY, "2026-08-01T06:00:00Z"));
    cluster.beforeNextNodePatch(() -> cluster.setNodeAnnotation("n1", KEY, "2026-08-01T06:00:01Z"));
    cluster.resetCounters();

    lock().releaseNodeLock("n1", "ns", "pod-a", false);

    assertThat(lockValue("n1")).contains("2026-08-01T06:00:01Z");
    assertThat(cluster.requests("patch", "nodes")).isEqualTo(1);
  }

  @Test
  void v21ReleaseRemovesAReStampOfTheSamePod() throws Exception {
    cluster.createNode("n1", Map.of(KEY, "2026-07-29T13:00:00Z,ns,pod-a"));
    cluster.beforeNextNodePatch(
        () -> cluster.setNodeAnnotation("n1", KEY, "2026-07-29T13:00:01Z,ns,pod-a"));
    cluster.resetCounters();

    lock().releaseNodeLock("n1", "ns", "pod-a", false);

    assertThat(lockValue("n1")).isEmpty();
    assertThat(cluster.requests("patch", "nodes")).isEqualTo(2);
  }

  @Test
  void v22SetTreatsItsOwnValueAfterALostResponseAsSuccess() throws Exception {
    cluster.createNode("n1", Map.of());
    // The patch "lands" (our value appears) but the client sees a failure.
    cluster.failNextNodePatchAfter(
        () -> cluster.setNodeAnnotation("n1", KEY, "2026-08-01T06:00:00Z,ns,pod-a"));
    cluster.resetCounters();

    try (LogCapture log = LogCapture.start()) {
      lock().setNodeLock("n1", "ns", "pod-a");
      // the emulator logs the injected lost response
      assertThat(log.expect("WARN dev\\.hamilock\\.testkit\\.Frontend - emulator request PATCH"))
          .singleElement()
          .asString()
          .contains("response lost");
    }

    assertThat(lockValue("n1")).contains("2026-08-01T06:00:00Z,ns,pod-a");
    assertThat(cluster.requests("patch", "nodes")).isEqualTo(1);
    assertThat(cluster.requests("get", "nodes")).isEqualTo(3);
  }

  @Test
  void v23SetStopsWithContentionWhenAnotherPodWinsTheRace() throws Exception {
    cluster.createNode("n1", Map.of());
    cluster.beforeNextNodePatch(
        () -> cluster.setNodeAnnotation("n1", KEY, "2026-08-01T06:00:00Z,ns,pod-b"));
    cluster.resetCounters();

    assertThatThrownBy(() -> lock().setNodeLock("n1", "ns", "pod-a"))
        .hasMessage(
            "failed to set node lock (node=n1, retry strategy={Duration:100ms Factor:2 Jitter:0.5 "
                + "Steps:5 Cap:0s}): node n1 is locked: node lock contention")
        .satisfies(e -> assertThat(HamiLockContentionException.isContention(e)).isTrue());
    assertThat(lockValue("n1")).contains("2026-08-01T06:00:00Z,ns,pod-b");
    assertThat(cluster.requests("patch", "nodes")).isEqualTo(1);
  }

  @Test
  void setFailsFastWhenAnyValueIsPresentEvenItsOwn() throws Exception {
    cluster.createNode("n1", Map.of(KEY, "2026-08-01T06:00:00Z,ns,pod-a"));
    assertThatThrownBy(() -> lock().setNodeLock("n1", "ns", "pod-a"))
        .isInstanceOf(HamiLockContentionException.class)
        .hasMessage("node n1 is locked: node lock contention");
  }

  @Test
  void exhaustedConflictsAreWrappedWithTheLastCauseAndAreNotContention() throws Exception {
    cluster.createNode("n1", Map.of());
    cluster.failNodePatches(
        5,
        409,
        "Conflict",
        "Operation cannot be fulfilled on nodes \"n1\": the object has been modified");

    assertThatThrownBy(() -> lock().setNodeLock("n1", "ns", "pod-a"))
        .isInstanceOf(HamiException.class)
        .hasMessage(
            "failed to set node lock (node=n1, retry strategy={Duration:100ms Factor:2 Jitter:0.5 "
                + "Steps:5 Cap:0s}): Operation cannot be fulfilled on nodes \"n1\": the object has been modified")
        .satisfies(e -> assertThat(HamiLockContentionException.isContention(e)).isFalse())
        .hasCauseInstanceOf(ApiException.class);
    assertThat(sleeps)
        .containsExactly(
            Duration.ofMillis(125),
            Duration.ofMillis(250),
            Duration.ofMillis(500),
            Duration.ofMillis(1000));
    assertThat(lockValue("n1")).isEmpty();
  }

  @Test
  void ownerLookupFailingOtherThanNotFoundIsReturnedWithoutTakeover() throws Exception {
    cluster.createNode("n1", Map.of(KEY, "2026-08-01T05:59:00Z,ns,pod-a"));
    cluster.failPodGets(1, 500, "InternalError", "etcd leader changed");
    assertThatThrownBy(() -> lock().lockNode("n1", "ns", "pod-b"))
        .isInstanceOf(ApiException.class)
        .satisfies(e -> assertThat(((ApiException) e).getCode()).isEqualTo(500));
    assertThat(lockValue("n1")).contains("2026-08-01T05:59:00Z,ns,pod-a");
  }

  @Test
  void v25HoldingOneNodesMutexDoesNotBlockAnotherNode() throws Exception {
    cluster.createNode("node-a", Map.of());
    cluster.createNode("node-b", Map.of());
    HamiNodeLock lock = lock();
    ReentrantLock mutexA = lock.nodeMutex("node-a");
    mutexA.lock();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    Thread lockerA =
        new Thread(
            () -> {
              try {
                lock.lockNode("node-a", "ns", "pod-a");
              } catch (Exception e) {
                failure.set(e);
              }
            });
    try {
      lockerA.start();
      lock.lockNode("node-b", "ns", "pod-b"); // completes while node-a's mutex is held
      assertThat(lockValue("node-b")).contains("2026-08-01T06:00:00Z,ns,pod-b");
      waitUntilQueued(mutexA, lockerA);
      assertThat(lockValue("node-a")).isEmpty(); // blocked inside SetNodeLock, nothing written
    } finally {
      mutexA.unlock();
    }
    lockerA.join(TimeUnit.SECONDS.toMillis(20));
    assertThat(lockerA.isAlive()).isFalse();
    assertThat(failure.get()).isNull();
    assertThat(lockValue("node-a")).contains("2026-08-01T06:00:00Z,ns,pod-a");
  }

  @Test
  void cleanupNodeLockForgetsTheMutex() {
    HamiNodeLock lock = lock();
    ReentrantLock before = lock.nodeMutex("n1");
    assertThat(lock.nodeMutex("n1")).isSameAs(before);
    lock.cleanupNodeLock("n1");
    assertThat(lock.nodeMutex("n1")).isNotSameAs(before);
  }

  @Test
  void builderRejectsBadConfiguration() {
    assertThatThrownBy(() -> HamiNodeLock.builder(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("apiClient");
    assertThatThrownBy(
            () -> HamiNodeLock.builder(cluster.newClient()).lockExpiry(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lockExpiry");
    assertThatThrownBy(() -> lock().lockNode("", "ns", "p"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("node");
  }

  private static void waitUntilQueued(ReentrantLock mutex, Thread thread)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!mutex.hasQueuedThread(thread)) {
      assertThat(System.nanoTime())
          .as("thread never queued on the node mutex")
          .isLessThan(deadline);
      Thread.sleep(5);
    }
  }
}
