package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Fault;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.core.LockOwner;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DevicePluginHandoffTest {
  final InMemoryCluster cluster = InMemoryCluster.create();
  final DevicePluginHandoff plugin = Fixtures.handoff(cluster);

  private String bound(PodView pod) {
    String uid = cluster.addPod(pod).view().uid();
    assertThat(binder(cluster).build().bind(NS, pod.name(), uid, "n1").outcome())
        .isEqualTo(BindOutcome.BOUND);
    return uid;
  }

  @Test
  void servesTheLockOwnerMarksItConsumedAndReleasesOnce() {
    cluster.addNode(node("n1", 1, 15360));
    String uid = bound(pod("p1", 1, 1000, 30));

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(r.foundBy()).contains(HandoffResult.FoundBy.LOCK_OWNER);
    assertThat(r.pod()).contains(LockOwner.of(NS, "p1", uid));
    assertThat(r.handedOut())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.containerIndex()).isZero();
              assertThat(c.uuids()).containsExactly(gpu("n1", 0));
              assertThat(c.devices().get(0).usedmem()).isEqualTo(1000);
              assertThat(c.devices().get(0).usedcores()).isEqualTo(30);
            });
    assertThat(r.lockReleased()).isTrue();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p1"))
        .containsEntry(TO_ALLOCATE, ";")
        .containsEntry("hami.io/bind-phase", "success")
        .containsEntry(Fixtures.ALLOCATED, gpu("n1", 0) + ",NVIDIA,1000,30:;");

    long patches = cluster.operationCount(Operation.PATCH_POD);
    HandoffResult again = plugin.allocateAll("n1");
    assertThat(again.status()).isEqualTo(HandoffResult.Status.NO_POD);
    assertThat(again.lockReleased()).isFalse();
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isEqualTo(patches);
  }

  @Test
  void servesContainersOneAllocateCallAtATime() {
    cluster.addNode(node("n1", 2, 15360));
    bound(
        PodView.builder(NS, "two")
            .containers(
                List.of(Fixtures.container("a", 1, 1000, 10), Fixtures.container("b", 1, 2000, 20)))
            .build());
    String before = annotations(cluster, "two").get(TO_ALLOCATE);

    HandoffResult first = plugin.allocate("n1", List.of(1));

    assertThat(first.status()).isEqualTo(HandoffResult.Status.PARTIAL);
    assertThat(first.handedOut())
        .singleElement()
        .satisfies(c -> assertThat(c.containerIndex()).isZero());
    assertThat(first.lockReleased()).isFalse();
    assertThat(lockValue(cluster, "n1")).endsWith(",default,two");
    assertThat(annotations(cluster, "two").get(TO_ALLOCATE))
        .isEqualTo(before.substring(before.indexOf(';')));
    assertThat(annotations(cluster, "two")).containsEntry("hami.io/bind-phase", "allocating");

    HandoffResult second = plugin.allocate("n1", List.of(1));

    assertThat(second.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(second.handedOut())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.containerIndex()).isEqualTo(1);
              assertThat(c.devices().get(0).usedmem()).isEqualTo(2000);
            });
    assertThat(annotations(cluster, "two")).containsEntry(TO_ALLOCATE, ";;");
    assertThat(lockValue(cluster, "n1")).isNull();
  }

  @Test
  void aDeviceCountMismatchFailsAndReleasesExactlyOnce() {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));

    HandoffResult r = plugin.allocate("n1", List.of(2));

    assertThat(r.status()).isEqualTo(HandoffResult.Status.FAILED);
    assertThat(r.reason()).contains("device number not matched");
    assertThat(r.lockReleased()).isTrue();
    assertThat(annotations(cluster, "p1")).containsEntry("hami.io/bind-phase", "failed");
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(plugin.allocate("n1", List.of(1)).status()).isEqualTo(HandoffResult.Status.NO_POD);
  }

  @Test
  void anInjectedAllocateFailureMarksThePodFailed() {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));

    HandoffResult r = plugin.fail("n1", "CUDA mount failed");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.FAILED);
    assertThat(r.reason()).isEqualTo("CUDA mount failed");
    assertThat(r.lockReleased()).isTrue();
    assertThat(annotations(cluster, "p1")).containsEntry("hami.io/bind-phase", "failed");
  }

  @Test
  void withoutALockTheFallbackListRuleFindsThePod() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    String v = gpu("n1", 0) + ",NVIDIA,1000,30:;";
    cluster.addPod(pod("done", 1, 1000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(
        NS,
        "done",
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, ";")
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/bind-phase", "success")
            .setAnnotation("hami.io/bind-time", "1")
            .build());
    cluster.addPod(pod("hami-pod", 1, 1000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(
        NS,
        "hami-pod",
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, v)
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/bind-phase", "allocating")
            .setAnnotation("hami.io/bind-time", "1")
            .build());

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(r.foundBy()).contains(HandoffResult.FoundBy.FALLBACK_LIST);
    assertThat(r.pod().orElseThrow().name())
        .isEqualTo("hami-pod"); // the served "done" pod is skipped
    assertThat(r.lockReleased()).isFalse();
  }

  @Test
  void anUndecodableToAllocateFailsThePod() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));
    cluster.patchPodMetadata(
        NS, "p1", MetadataPatch.builder().setAnnotation(TO_ALLOCATE, "GPU-1,NVIDIA,x,0:;").build());

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.FAILED);
    assertThat(r.reason()).contains("undecodable").contains(TO_ALLOCATE);
    assertThat(lockValue(cluster, "n1")).isNull();
  }

  @Test
  void aReadFailureIsAnErrorThatWritesAndReleasesNothing() {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));
    cluster.faults((op, t) -> op == Operation.READ_POD ? Fault.FAIL_BEFORE : Fault.NONE);

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.ERROR);
    assertThat(lockValue(cluster, "n1")).endsWith(",default,p1");
  }

  @Test
  void repeatedFailAndFailAfterCompletionReleaseAndWriteNothingMore() {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));
    HandoffResult done = plugin.allocateAll("n1");
    assertThat(done.pod().orElseThrow().name()).isEqualTo("p1");
    long patches = cluster.operationCount(Operation.PATCH_POD);
    long lockWrites = cluster.operationCount(Operation.LOCK_WRITE);

    HandoffResult late = plugin.fail("n1", "late failure report");

    assertThat(late.status()).isEqualTo(HandoffResult.Status.NO_POD);
    assertThat(late.lockReleased()).isFalse();
    assertThat(annotations(cluster, "p1")).containsEntry("hami.io/bind-phase", "success");
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isEqualTo(patches);
    assertThat(cluster.operationCount(Operation.LOCK_WRITE)).isEqualTo(lockWrites);

    // a second pod fails twice: one FAILED with one release, then nothing
    bound(pod("p2", 1, 2000, 30));
    HandoffResult first = plugin.fail("n1", "mount failed");
    HandoffResult second = plugin.fail("n1", "mount failed");
    assertThat(first.status()).isEqualTo(HandoffResult.Status.FAILED);
    assertThat(first.pod().orElseThrow().name()).isEqualTo("p2");
    assertThat(first.lockReleased()).isTrue();
    assertThat(second.status()).isEqualTo(HandoffResult.Status.NO_POD);
    assertThat(second.lockReleased()).isFalse();
    assertThat(annotations(cluster, "p1")).containsEntry("hami.io/bind-phase", "success");
    assertThat(lockValue(cluster, "n1")).isNull();
  }

  // ------------------------------------------------------------------ lock owner not ready

  /**
   * Pod {@code name} already served on n1: bound, bind phase {@code success}, with the given
   * to-allocate text.
   */
  private void servedNeighbour(String name, String toAllocate) throws Exception {
    cluster.addPod(pod(name, 1, 1000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(
        NS,
        name,
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, toAllocate)
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/bind-phase", "success")
            .setAnnotation("hami.io/bind-time", "1")
            .build());
  }

  /**
   * Pod {@code name} holds n1's lock but is neither annotated nor bound (its binder is between
   * steps).
   */
  private String lockedButNotReady(String name) throws Exception {
    String uid = cluster.addPod(pod(name, 1, 2000, 40)).view().uid();
    Fixtures.lock(cluster, Fixtures.LOCK_KEY).acquire("n1", LockOwner.of(NS, name, uid));
    return uid;
  }

  @Test
  void anUnreadyLockOwnerIsReportedAndNoOtherPodIsServedNorAnyLockReleased() throws Exception {
    // the reported run: B holds the lock, not yet bound; A was served but still lists a pending
    // entry
    cluster.addNode(node("n1", 1, 15360));
    servedNeighbour("a", gpu("n1", 0) + ",NVIDIA,1000,30:;");
    lockedButNotReady("b");
    Map<String, String> aBefore = annotations(cluster, "a");
    String lockBefore = lockValue(cluster, "n1");
    long patches = cluster.operationCount(Operation.PATCH_POD);
    long lockWrites = cluster.operationCount(Operation.LOCK_WRITE);

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.OWNER_NOT_READY);
    assertThat(r.pod()).map(LockOwner::name).contains("b");
    assertThat(r.foundBy()).contains(HandoffResult.FoundBy.LOCK_OWNER);
    assertThat(r.handedOut()).isEmpty();
    assertThat(r.lockReleased()).isFalse();
    assertThat(r.reason()).contains("default/b");
    assertThat(annotations(cluster, "a")).isEqualTo(aBefore);
    assertThat(lockValue(cluster, "n1")).isEqualTo(lockBefore);
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isEqualTo(patches);
    assertThat(cluster.operationCount(Operation.LOCK_WRITE)).isEqualTo(lockWrites);
  }

  @Test
  void theUnreadyOwnerIsServedOnceItIsBoundAndItsLockReleasedExactlyOnce() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    servedNeighbour("a", gpu("n1", 0) + ",NVIDIA,1000,30:;");
    String uid = lockedButNotReady("b");
    assertThat(plugin.allocateAll("n1").status()).isEqualTo(HandoffResult.Status.OWNER_NOT_READY);

    // B's binder goes on (re-entrant on its own lock): annotate, bind
    assertThat(binder(cluster).build().bind(NS, "b", uid, "n1").outcome())
        .isEqualTo(BindOutcome.BOUND);
    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(r.pod()).contains(LockOwner.of(NS, "b", uid));
    assertThat(r.handedOut())
        .singleElement()
        .satisfies(c -> assertThat(c.devices().get(0).usedmem()).isEqualTo(2000));
    assertThat(r.lockReleased()).isTrue();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "a")).containsEntry("hami.io/bind-phase", "success");

    HandoffResult again = plugin.allocateAll("n1");
    assertThat(again.status()).isEqualTo(HandoffResult.Status.NO_POD);
    assertThat(again.lockReleased()).isFalse();
  }

  @Test
  void anAnnotatedButUnboundOwnerIsNotServed() throws Exception {
    // kubelet only calls Allocate for bound pods: whoever it admits now is not B
    cluster.addNode(node("n1", 1, 15360));
    String uid = lockedButNotReady("b");
    cluster.patchPodMetadata(
        NS,
        "b",
        MetadataPatch.builder()
            .expectedUid(uid)
            .setAnnotation(TO_ALLOCATE, gpu("n1", 0) + ",NVIDIA,2000,40:;")
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/bind-phase", "allocating")
            .setAnnotation("hami.io/bind-time", "1")
            .build());
    Map<String, String> before = annotations(cluster, "b");

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.OWNER_NOT_READY);
    assertThat(r.reason()).contains("not bound");
    assertThat(annotations(cluster, "b")).isEqualTo(before);
    assertThat(lockValue(cluster, "n1")).endsWith(",default,b");
  }

  @Test
  void anUnreadyOwnerIsNotServedEvenWhenAnAllocatingPodIsListed() throws Exception {
    // an in-flight pod on the node without the lock must not be served in the owner's place
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("other", 1, 1000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(
        NS,
        "other",
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, gpu("n1", 0) + ",NVIDIA,1000,30:;")
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/bind-phase", "allocating")
            .setAnnotation("hami.io/bind-time", "1")
            .build());
    lockedButNotReady("b");
    Map<String, String> before = annotations(cluster, "other");

    assertThat(plugin.allocateAll("n1").status()).isEqualTo(HandoffResult.Status.OWNER_NOT_READY);
    assertThat(annotations(cluster, "other")).isEqualTo(before);
  }

  @Test
  void failWithAnUnreadyOwnerFailsNobody() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    servedNeighbour("a", gpu("n1", 0) + ",NVIDIA,1000,30:;");
    lockedButNotReady("b");

    HandoffResult r = plugin.fail("n1", "CUDA mount failed");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.OWNER_NOT_READY);
    assertThat(r.lockReleased()).isFalse();
    assertThat(annotations(cluster, "a")).containsEntry("hami.io/bind-phase", "success");
    assertThat(annotations(cluster, "b")).doesNotContainKey("hami.io/bind-phase");
    assertThat(lockValue(cluster, "n1")).endsWith(",default,b");
  }

  @Test
  void aLockNamingADeletedPodServesNobodyAndReleasesNothing() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("other", 1, 1000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(
        NS,
        "other",
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, gpu("n1", 0) + ",NVIDIA,1000,30:;")
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/bind-phase", "allocating")
            .setAnnotation("hami.io/bind-time", "1")
            .build());
    lockedButNotReady("gone");
    cluster.deletePod(NS, "gone");

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.OWNER_NOT_READY);
    assertThat(r.reason()).contains("default/gone").contains("not found");
    assertThat(lockValue(cluster, "n1")).endsWith(",default,gone");
    assertThat(annotations(cluster, "other")).containsEntry("hami.io/bind-phase", "allocating");
  }

  @Test
  void anOwnerAlreadyServedWhoseReleaseFailedIsNotServedAgainAndNothingIsReleased()
      throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));
    cluster.faults((op, t) -> op == Operation.LOCK_WRITE ? Fault.FAIL_BEFORE : Fault.NONE);
    try (LogCapture log = LogCapture.start()) {
      HandoffResult first = plugin.allocateAll("n1");
      assertThat(first.status()).isEqualTo(HandoffResult.Status.COMPLETED);
      assertThat(first.lockReleased()).isFalse(); // the release failed: the lock is left to expiry
      assertThat(
              log.expect(
                  "WARN dev\\.hamilock\\.bind\\.DevicePluginHandoff - node n1: cannot release lock"
                      + " hami\\.io/mutex\\.lock of pod default/p1 \\(uid [^)]+\\): injected:"
                      + " LOCK_WRITE on node n1 failed$"))
          .as("the failed release is logged once: the lock is left to expire")
          .hasSize(1);
    }
    cluster.faults(InMemoryCluster.FaultInjector.NONE);
    long patches = cluster.operationCount(Operation.PATCH_POD);

    HandoffResult again = plugin.allocateAll("n1");

    assertThat(again.status()).isEqualTo(HandoffResult.Status.NO_POD);
    assertThat(again.reason()).contains("already served");
    assertThat(again.handedOut()).isEmpty();
    assertThat(again.lockReleased()).isFalse();
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isEqualTo(patches);
    assertThat(lockValue(cluster, "n1")).endsWith(",default,p1");
  }

  // ------------------------------------------------------------------ lock requests of one
  // hand-off

  private long lockReads() {
    return cluster.operationCount(Operation.LOCK_READ);
  }

  private long lockWrites() {
    return cluster.operationCount(Operation.LOCK_WRITE);
  }

  /** Sets the node's lock annotation (an admin write: no lock-store counter moves). */
  private void setLock(String value) {
    Map<String, String> a = new HashMap<>(cluster.nodes().get(0).annotations());
    a.put(LOCK_KEY, value);
    cluster.setNodeAnnotations("n1", a);
  }

  @Test
  void servingTheLockOwnerCostsOneLockReadAndOneCompareAndDelete() {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));
    long reads = lockReads();
    long writes = lockWrites();

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(r.lockReleased()).isTrue();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(lockReads() - reads).as("the lookup's read, reused by the release").isEqualTo(1);
    assertThat(lockWrites() - writes).as("one compare-and-delete").isEqualTo(1);
  }

  @Test
  void aFailedHandOffReleasesWithTheObservedValueToo() {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));
    long reads = lockReads();
    long writes = lockWrites();

    HandoffResult r = plugin.fail("n1", "CUDA mount failed");

    assertThat(r.lockReleased()).isTrue();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(lockReads() - reads).isEqualTo(1);
    assertThat(lockWrites() - writes).isEqualTo(1);
  }

  @Test
  void aLockReStampedAfterTheLookupIsStillReleasedByAFreshRead() {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));
    String reStamped = "2030-01-01T00:00:00Z,default,p1";
    assertThat(lockValue(cluster, "n1")).endsWith(",default,p1").isNotEqualTo(reStamped);
    // the owner's binder re-enters and re-stamps the value just before the plugin's delete
    cluster.faults(
        (op, t) -> {
          if (op == Operation.LOCK_WRITE
              && lockValue(cluster, "n1") != null
              && !reStamped.equals(lockValue(cluster, "n1"))) {
            setLock(reStamped);
          }
          return Fault.NONE;
        });
    long reads = lockReads();
    long writes = lockWrites();

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.lockReleased()).isTrue();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(lockReads() - reads).as("lookup + the fallback's read").isEqualTo(2);
    assertThat(lockWrites() - writes)
        .as("the failed and the successful compare-and-delete")
        .isEqualTo(2);
  }

  @Test
  void anotherOwnersLockThatReplacedTheObservedOneIsNeverReleased() {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));
    String others = "2026-06-14T15:05:03Z,default,someone-else";
    cluster.faults(
        (op, t) -> {
          if (op == Operation.LOCK_WRITE && !others.equals(lockValue(cluster, "n1"))) {
            setLock(others);
          }
          return Fault.NONE;
        });

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(r.lockReleased()).isFalse();
    assertThat(lockValue(cluster, "n1")).isEqualTo(others);
  }

  @Test
  void aPodFoundByTheListRuleIsReleasedOwnerCheckedWithoutDeletingALegacyLock() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("hami-pod", 1, 1000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(
        NS,
        "hami-pod",
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, gpu("n1", 0) + ",NVIDIA,1000,30:;")
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/bind-phase", "allocating")
            .setAnnotation("hami.io/bind-time", "1")
            .build());
    setLock("2026-06-14T15:05:03Z");
    long reads = lockReads();
    long writes = lockWrites();

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.foundBy()).contains(HandoffResult.FoundBy.FALLBACK_LIST);
    assertThat(r.lockReleased()).isFalse();
    assertThat(lockValue(cluster, "n1")).isEqualTo("2026-06-14T15:05:03Z");
    assertThat(lockReads() - reads).as("lookup + the owner-checked release's read").isEqualTo(2);
    assertThat(lockWrites() - writes).as("a legacy value is never deleted").isZero();
  }

  // ------------------------------------------------------------------ fallback list (no usable
  // owner)

  @ParameterizedTest
  @ValueSource(strings = {"2026-06-14T15:05:03Z", "2026-06-14T15:05:03Z,,", "lock", "a,b"})
  void aLockWithoutAUsableOwnerFallsBackToTheListSkippingServedPods(String lock) throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    servedNeighbour("served-stale", gpu("n1", 0) + ",NVIDIA,1000,30:;");
    servedNeighbour("served", ";");
    cluster.addPod(pod("failed", 1, 1000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(
        NS,
        "failed",
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, gpu("n1", 0) + ",NVIDIA,1000,30:;")
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/bind-phase", "failed")
            .setAnnotation("hami.io/bind-time", "1")
            .build());
    cluster.addPod(pod("hami-pod", 1, 3000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(
        NS,
        "hami-pod",
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, gpu("n1", 0) + ",NVIDIA,3000,30:;")
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/bind-phase", "allocating")
            .setAnnotation("hami.io/bind-time", "1")
            .build());
    Map<String, String> nodeAnnotations = new HashMap<>(cluster.nodes().get(0).annotations());
    nodeAnnotations.put(LOCK_KEY, lock);
    cluster.setNodeAnnotations("n1", nodeAnnotations);

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(r.foundBy()).contains(HandoffResult.FoundBy.FALLBACK_LIST);
    assertThat(r.pod().orElseThrow().name()).isEqualTo("hami-pod");
    assertThat(r.handedOut())
        .singleElement()
        .satisfies(c -> assertThat(c.devices().get(0).usedmem()).isEqualTo(3000));
    assertThat(r.lockReleased())
        .isFalse(); // not hami-pod's lock: left for its writer, expiry or takeover
    assertThat(lockValue(cluster, "n1")).isEqualTo(lock);
    assertThat(annotations(cluster, "served-stale"))
        .containsEntry(TO_ALLOCATE, gpu("n1", 0) + ",NVIDIA,1000,30:;");
    assertThat(annotations(cluster, "failed")).containsEntry("hami.io/bind-phase", "failed");

    assertThat(plugin.allocateAll("n1").status()).isEqualTo(HandoffResult.Status.NO_POD);
  }

  @Test
  void nothingToServeIsNoPod() {
    cluster.addNode(node("n1", 1, 15360));
    HandoffResult r = plugin.allocateAll("n1");
    assertThat(r.status()).isEqualTo(HandoffResult.Status.NO_POD);
    assertThat(r.reason()).isEqualTo("no binding pod found on node n1");
  }
}
