package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.HamiAnnotations;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * kubernetes#96579: kube-scheduler's bind call timed out although the bind went through, and it
 * calls bind again for the same pod and node. The retry is an idempotent success (empty error) when
 * the pod is bound to that node by this flow, without taking a lock; an error when it is bound
 * elsewhere or without this flow's allocation.
 */
class Kubernetes96579IdempotentBindTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  @Test
  void aRetriedBindOfAPodThisFlowBoundIsASuccessWithoutALock() throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    ClusterPod w1 = cluster.addPod(pod("w1", 1, 3000, 0));
    PodBinder binder = binder(cluster).build();
    BindResult first = binder.bind(NS, "w1", w1.view().uid(), "gpu-1");
    assertThat(first.outcome()).isEqualTo(BindOutcome.BOUND);
    Map<String, String> before = annotations(cluster, "w1");
    // the device plugin served and released the lock meanwhile
    cluster.lockStore().deleteIfEquals("gpu-1", LOCK_KEY, lockValue(cluster, "gpu-1"));
    cluster.patchPodMetadata(
        NS,
        "w1",
        MetadataPatch.builder().setAnnotation(HamiAnnotations.BIND_PHASE, "success").build());
    long patches = cluster.operationCount(InMemoryCluster.Operation.PATCH_POD);
    long lockWrites = cluster.operationCount(InMemoryCluster.Operation.LOCK_WRITE);

    BindResult retry = binder.bind(NS, "w1", w1.view().uid(), "gpu-1");

    assertThat(retry.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(retry.reason()).isEmpty();
    assertThat(retry.allocationSource()).isEqualTo(AllocationSource.ALREADY_RECORDED);
    assertThat(retry.devices().orElseThrow().forVendor("NVIDIA").get(0)).hasSize(1);
    assertThat(retry.lockAttempts()).isZero();
    assertThat(retry.locksHeld()).isFalse();
    assertThat(lockValue(cluster, "gpu-1")).as("no lock taken").isNull();
    assertThat(cluster.operationCount(InMemoryCluster.Operation.PATCH_POD)).isEqualTo(patches);
    assertThat(cluster.operationCount(InMemoryCluster.Operation.LOCK_WRITE)).isEqualTo(lockWrites);
    Map<String, String> after = annotations(cluster, "w1");
    assertThat(after)
        .containsEntry(HamiAnnotations.BIND_PHASE, "success")
        .containsEntry(Fixtures.ALLOCATED, before.get(Fixtures.ALLOCATED));
  }

  @Test
  void aRetryWhileTheFirstBindStillHoldsTheLockIsAlsoASuccess() {
    cluster.addNode(node("gpu-1", 1, 15360));
    ClusterPod w1 = cluster.addPod(pod("w1", 1, 3000, 0));
    PodBinder binder = binder(cluster).build();
    binder.bind(NS, "w1", w1.view().uid(), "gpu-1");
    String lock = lockValue(cluster, "gpu-1");

    BindResult retry = binder.bind(NS, "w1", w1.view().uid(), "gpu-1");

    assertThat(retry.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(lockValue(cluster, "gpu-1"))
        .as("the first bind's lock stays for the device plugin")
        .isEqualTo(lock);
  }

  @Test
  void boundElsewhereIsStillAnError() {
    cluster.addNode(node("gpu-1", 1, 15360));
    cluster.addNode(node("gpu-2", 1, 15360));
    ClusterPod w1 = cluster.addPod(pod("w1", 1, 3000, 0));
    PodBinder binder = binder(cluster).build();
    binder.bind(NS, "w1", w1.view().uid(), "gpu-2");

    BindResult retry = binder.bind(NS, "w1", w1.view().uid(), "gpu-1");

    assertThat(retry.outcome()).isEqualTo(BindOutcome.ALREADY_BOUND);
    assertThat(retry.reason()).contains("already bound to node gpu-2", "not gpu-1");
    assertThat(retry.boundNode()).contains("gpu-2");
  }

  @Test
  void boundHereWithoutThisFlowsAllocationIsAnError() {
    cluster.addNode(node("gpu-1", 1, 15360));
    // bound by the default binder (e.g. an ignorable extender's fallback): no allocation
    // annotations
    ClusterPod w1 = cluster.addPod(pod("w1", 1, 3000, 0), Optional.of("gpu-1"));

    BindResult r = binder(cluster).build().bind(NS, "w1", w1.view().uid(), "gpu-1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.ALREADY_BOUND);
    assertThat(r.reason())
        .contains(
            "already bound to node gpu-1 but not by this bind flow", "hami.io/vgpu-node=null");
    assertThat(lockValue(cluster, "gpu-1")).isNull();
  }

  @Test
  void aFailedPhaseOrAMissingAllocationIsNotThisFlowsBinding() throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    ClusterPod w1 = cluster.addPod(pod("w1", 1, 3000, 0));
    PodBinder binder = binder(cluster).build();
    binder.bind(NS, "w1", w1.view().uid(), "gpu-1");
    cluster.patchPodMetadata(
        NS,
        "w1",
        MetadataPatch.builder().setAnnotation(HamiAnnotations.BIND_PHASE, "failed").build());

    assertThat(binder.bind(NS, "w1", w1.view().uid(), "gpu-1").reason())
        .contains("hami.io/bind-phase=failed");

    cluster.patchPodMetadata(
        NS,
        "w1",
        MetadataPatch.builder()
            .setAnnotation(HamiAnnotations.BIND_PHASE, "success")
            .removeAnnotation(Fixtures.ALLOCATED)
            .build());
    assertThat(binder.bind(NS, "w1", w1.view().uid(), "gpu-1").outcome())
        .isEqualTo(BindOutcome.ALREADY_BOUND);
  }

  @Test
  void aDeviceLessPodBoundHereIsASuccess() {
    cluster.addNode(node("cpu-1", 0, 0));
    ClusterPod c =
        cluster.addPod(
            dev.hamilock.device.spi.view.PodView.builder(NS, "c").build(), Optional.of("cpu-1"));

    BindResult r = binder(cluster).build().bind(NS, "c", c.view().uid(), "cpu-1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.reason()).isEmpty();
  }
}
