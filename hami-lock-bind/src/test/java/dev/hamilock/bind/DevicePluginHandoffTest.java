package dev.hamilock.bind;

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
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DevicePluginHandoffTest {
  final InMemoryCluster cluster = InMemoryCluster.create();
  final DevicePluginHandoff plugin = Fixtures.handoff(cluster);

  private String bound(PodView pod) {
    String uid = cluster.addPod(pod).view().uid();
    assertThat(binder(cluster).build().bind(NS, pod.name(), uid, "n1").outcome()).isEqualTo(BindOutcome.BOUND);
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
    assertThat(r.handedOut()).singleElement().satisfies(c -> {
      assertThat(c.containerIndex()).isZero();
      assertThat(c.uuids()).containsExactly(gpu("n1", 0));
      assertThat(c.devices().get(0).usedmem()).isEqualTo(1000);
      assertThat(c.devices().get(0).usedcores()).isEqualTo(30);
    });
    assertThat(r.lockReleased()).isTrue();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p1")).containsEntry(TO_ALLOCATE, ";").containsEntry("hami.io/bind-phase", "success")
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
    bound(PodView.builder(NS, "two").containers(List.of(Fixtures.container("a", 1, 1000, 10),
        Fixtures.container("b", 1, 2000, 20))).build());
    String before = annotations(cluster, "two").get(TO_ALLOCATE);

    HandoffResult first = plugin.allocate("n1", List.of(1));

    assertThat(first.status()).isEqualTo(HandoffResult.Status.PARTIAL);
    assertThat(first.handedOut()).singleElement().satisfies(c -> assertThat(c.containerIndex()).isZero());
    assertThat(first.lockReleased()).isFalse();
    assertThat(lockValue(cluster, "n1")).endsWith(",default,two");
    assertThat(annotations(cluster, "two").get(TO_ALLOCATE)).isEqualTo(before.substring(before.indexOf(';')));
    assertThat(annotations(cluster, "two")).containsEntry("hami.io/bind-phase", "allocating");

    HandoffResult second = plugin.allocate("n1", List.of(1));

    assertThat(second.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(second.handedOut()).singleElement().satisfies(c -> {
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
    cluster.patchPodMetadata(NS, "done", MetadataPatch.builder().setAnnotation(TO_ALLOCATE, ";")
        .setAnnotation("hami.io/vgpu-node", "n1").setAnnotation("hami.io/bind-phase", "success")
        .setAnnotation("hami.io/bind-time", "1").build());
    cluster.addPod(pod("hami-pod", 1, 1000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(NS, "hami-pod", MetadataPatch.builder().setAnnotation(TO_ALLOCATE, v)
        .setAnnotation("hami.io/vgpu-node", "n1").setAnnotation("hami.io/bind-phase", "allocating")
        .setAnnotation("hami.io/bind-time", "1").build());

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(r.foundBy()).contains(HandoffResult.FoundBy.FALLBACK_LIST);
    assertThat(r.pod().orElseThrow().name()).isEqualTo("hami-pod"); // the served "done" pod is skipped
    assertThat(r.lockReleased()).isFalse();
  }

  @Test
  void anUndecodableToAllocateFailsThePod() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    bound(pod("p1", 1, 1000, 30));
    cluster.patchPodMetadata(NS, "p1", MetadataPatch.builder().setAnnotation(TO_ALLOCATE, "GPU-1,NVIDIA,x,0:;").build());

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
  void nothingToServeIsNoPod() {
    cluster.addNode(node("n1", 1, 15360));
    HandoffResult r = plugin.allocateAll("n1");
    assertThat(r.status()).isEqualTo(HandoffResult.Status.NO_POD);
    assertThat(r.reason()).isEqualTo("no binding pod found on node n1");
  }
}
