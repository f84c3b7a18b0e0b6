package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.CLOCK;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.RetriedBind.Retried;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link RetriedBind}: recognising a bind kube-scheduler retried after it went through
 * (kubernetes#96579) from the bound pod's allocation annotations alone.
 */
class RetriedBindTest {
  final InMemoryCluster cluster = InMemoryCluster.create();
  final RetriedBind retried =
      new RetriedBind(PodFitter.create(REGISTRY), REGISTRY, cluster, null); // no clean-up asked

  /** A pod bound to gpu-1 by this flow. */
  ClusterPod boundByThisFlow() throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    ClusterPod p = cluster.addPod(pod("w1", 1, 3000, 0));
    assertThat(binder(cluster).build().bind(NS, "w1", p.view().uid(), "gpu-1").isBound()).isTrue();
    return cluster.readPod(NS, "w1").orElseThrow();
  }

  PodView with(PodView pod, String key, String value) throws Exception {
    MetadataPatch.Builder b = MetadataPatch.builder();
    MetadataPatch patch =
        value == null ? b.removeAnnotation(key).build() : b.setAnnotation(key, value).build();
    return cluster.patchPodMetadata(NS, pod.name(), patch).view();
  }

  @Test
  void aPodThisFlowBoundCarriesItsRecordedAllocation() throws Exception {
    Retried r = retried.check("gpu-1", boundByThisFlow().view());

    assertThat(r.problem()).isEmpty();
    assertThat(r.devices().orElseThrow().forVendor("NVIDIA")).hasSize(1);
  }

  @Test
  void eachMissingOrOtherAnnotationIsNamedAsTheProblem() throws Exception {
    PodView bound = boundByThisFlow().view();

    assertThat(retried.check("gpu-2", bound).problem())
        .contains(HamiAnnotations.VGPU_NODE + "=gpu-1");
    assertThat(retried.check("gpu-1", with(bound, HamiAnnotations.BIND_PHASE, "failed")).problem())
        .contains(HamiAnnotations.BIND_PHASE + "=failed");
    PodView noTime = with(bound, HamiAnnotations.BIND_PHASE, "success");
    noTime = with(noTime, HamiAnnotations.BIND_TIME, null);
    assertThat(retried.check("gpu-1", noTime).problem())
        .contains(HamiAnnotations.BIND_TIME + " absent");
  }

  @Test
  void aPodWhoseAllocationGivesAnotherDeviceCountIsNotThisFlows() throws Exception {
    PodView bound = boundByThisFlow().view();
    PodView twoGpus =
        bound.toBuilder().containers(List.of(Fixtures.container("main", 2, 3000, 0))).build();

    assertThat(retried.check("gpu-1", twoGpus).problem().orElseThrow())
        .isEqualTo("container 0 requests 2 NVIDIA device(s), the allocation gives 1");
  }

  @Test
  void aPodRequestingNoDeviceNeedsNoAllocation() {
    PodView plain = PodView.builder(NS, "plain").containers(List.of()).build();

    Retried r = retried.check("gpu-1", plain);

    assertThat(r.problem()).isEmpty();
    assertThat(r.devices()).isEmpty();
  }

  @Test
  void theAnswerIsBoundForThisFlowsPodAndAlreadyBoundElsewhere() throws Exception {
    ClusterPod bound = boundByThisFlow();

    BindResult here = retried.answer(new BindCall(NS, "w1", "", "gpu-1", CLOCK), bound);
    BindResult there = retried.answer(new BindCall(NS, "w1", "", "gpu-9", CLOCK), bound);

    assertThat(here.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(here.allocationSource()).isEqualTo(AllocationSource.ALREADY_RECORDED);
    assertThat(here.boundNode()).contains("gpu-1");
    assertThat(there.outcome()).isEqualTo(BindOutcome.ALREADY_BOUND);
    assertThat(there.reason())
        .isEqualTo("pod default/w1 is already bound to node gpu-1, not gpu-9");
    assertThat(there.boundNode()).contains("gpu-1");
    assertThat(there.devices()).isEqualTo(Optional.empty());
  }
}
