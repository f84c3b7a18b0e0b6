package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.NOW;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ExtenderFilterTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  @Test
  void choosesOneNodeAndGivesAReasonForEveryOther() throws Exception {
    cluster.addNode(node("small", 1, 15360));
    cluster.addNode(node("one-gpu", 1, 81920));
    cluster.addNode(node("big", 2, 40960));
    PodView p = cluster.addPod(pod("p1", 2, 20000, 10)).view();

    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY)
            .build()
            .filter(p, List.of("small", "one-gpu", "big", "gone"));

    assertThat(d.devicesRequested()).isTrue();
    assertThat(d.node()).contains("big");
    assertThat(d.passedNodes()).containsExactly("big");
    assertThat(d.failedNodes())
        .containsEntry("small", "NodeInsufficientDevice")
        .containsEntry("one-gpu", "NodeInsufficientDevice")
        .containsEntry("gone", "node not found");
    assertThat(d.devices().orElseThrow().forVendor("NVIDIA").get(0)).hasSize(2);
    assertThat(d.annotated()).isFalse();
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isZero();
  }

  @Test
  void aFilterWithoutAWriterRefusesAnnotateAsRejectedAndWritesNothing() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p = cluster.addPod(pod("p1", 1, 1000, 30)).view();
    ExtenderFilter filter = ExtenderFilter.builder(cluster, REGISTRY).build();
    FilterDecision d = filter.filter(p, List.of("n1"));

    org.assertj.core.api.Assertions.assertThatThrownBy(() -> filter.annotate(p, d))
        .isInstanceOfSatisfying(
            dev.hamilock.bind.cluster.ClusterException.class,
            e ->
                assertThat(e.kind())
                    .isEqualTo(dev.hamilock.bind.cluster.ClusterException.Kind.REJECTED))
        .hasMessageContaining("has no writer");
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isZero();
  }

  @Test
  void reportsHamisCardReasons() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p = cluster.addPod(pod("p1", 1, 20000, 10)).view();

    FilterDecision d = ExtenderFilter.builder(cluster, REGISTRY).build().filter(p, List.of("n1"));

    assertThat(d.node()).isEmpty();
    assertThat(d.failedNodes()).containsEntry("n1", "1/1 CardInsufficientMemory");
  }

  @Test
  void writesHamisFilterAnnotationsWhenConfigured() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p = cluster.addPod(pod("p1", 1, 1000, 30)).view();

    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY)
            .writeAnnotations(cluster)
            .clock(Fixtures.CLOCK)
            .build()
            .filter(p, List.of("n1"));

    assertThat(d.annotated()).isTrue();
    String v = gpu("n1", 0) + ",NVIDIA,1000,30:;";
    assertThat(annotations(cluster, "p1"))
        .containsEntry(TO_ALLOCATE, v)
        .containsEntry(ALLOCATED, v)
        .containsEntry("hami.io/vgpu-node", "n1")
        .containsEntry("hami.io/vgpu-time", Long.toString(NOW.getEpochSecond()))
        .doesNotContainKeys("hami.io/bind-phase", "hami.io/bind-time");
    assertThat(cluster.pods().get(0).view().labels()).containsEntry("hami.io/vgpu-node", "n1");
  }

  @Test
  void countsOtherPodsButNotThePodsOwnPreviousAllocation() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    String mine = gpu("n1", 0) + ",NVIDIA,10000,30:;";
    cluster.patchPodMetadata(
        NS,
        "p1",
        MetadataPatch.builder()
            .setAnnotation(ALLOCATED, mine)
            .setAnnotation("hami.io/vgpu-node", "n1")
            .build());
    ExtenderFilter filter = ExtenderFilter.builder(cluster, REGISTRY).build();

    assertThat(filter.filter(p, List.of("n1")).node()).contains("n1");

    cluster.addPod(pod("other", 1, 10000, 30), Optional.of("n1"));
    cluster.patchPodMetadata(
        NS,
        "other",
        MetadataPatch.builder()
            .setAnnotation(ALLOCATED, mine)
            .setAnnotation("hami.io/vgpu-node", "n1")
            .build());
    assertThat(filter.filter(p, List.of("n1")).failedNodes())
        .containsEntry("n1", "1/1 CardInsufficientMemory");
  }

  @Test
  void aPodWithoutDeviceRequestsPassesEveryCandidate() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p = cluster.addPod(PodView.builder(NS, "plain").build()).view();

    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY)
            .writeAnnotations(cluster)
            .build()
            .filter(p, List.of("n1", "gone"));

    assertThat(d.devicesRequested()).isFalse();
    assertThat(d.node()).isEmpty();
    assertThat(d.passedNodes()).containsExactlyInAnyOrder("n1", "gone");
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isZero();
  }

  @Test
  void neverOverwritesTheAllocationOfABoundAndServedPod() throws Exception {
    // kube-scheduler may re-filter a pod whose ambiguous binding was in fact applied (HAMi#2645):
    // a fresh Filter allocation must not replace what the running pod was handed
    cluster.addNode(node("n1", 2, 15360));
    PodView p = cluster.addPod(pod("p1", 1, 1000, 30)).view();
    assertThat(Fixtures.binder(cluster).build().bind(NS, "p1", p.uid(), "n1").outcome())
        .isEqualTo(BindOutcome.BOUND);
    assertThat(Fixtures.handoff(cluster).allocateAll("n1").status())
        .isEqualTo(HandoffResult.Status.COMPLETED);
    java.util.Map<String, String> before = annotations(cluster, "p1");
    long patches = cluster.operationCount(Operation.PATCH_POD);
    ExtenderFilter filter =
        ExtenderFilter.builder(cluster, REGISTRY)
            .writeAnnotations(cluster)
            .clock(Fixtures.CLOCK)
            .build();

    FilterDecision d = filter.filter(p, List.of("n1"));

    assertThat(d.node()).contains("n1");
    assertThat(d.annotated()).isFalse();
    assertThat(annotations(cluster, "p1"))
        .isEqualTo(before)
        .containsEntry(TO_ALLOCATE, ";")
        .containsEntry("hami.io/bind-phase", "success");
    assertThat(cluster.operationCount(Operation.PATCH_POD)).isEqualTo(patches);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> filter.annotate(p, d))
        .isInstanceOfSatisfying(
            dev.hamilock.bind.cluster.ClusterException.class,
            e ->
                assertThat(e.kind())
                    .isEqualTo(dev.hamilock.bind.cluster.ClusterException.Kind.CONFLICT))
        .hasMessageContaining("default/p1")
        .hasMessageContaining("bound to node n1");
    assertThat(annotations(cluster, "p1")).isEqualTo(before);
  }

  @Test
  void issue25TheCallersFreshReadStandsInForTheFiltersOwnAndAChangeSinceItIsNeverOverwritten()
      throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    cluster.addPod(pod("p1", 1, 1000, 30));
    ExtenderFilter filter =
        ExtenderFilter.builder(cluster, REGISTRY)
            .writeAnnotations(cluster)
            .clock(Fixtures.CLOCK)
            .build();
    var stored = cluster.readPod(NS, "p1").orElseThrow();
    long reads = cluster.operationCount(Operation.READ_POD);

    FilterDecision d = filter.filter(stored, List.of("n1"));

    assertThat(d.annotated()).isTrue();
    assertThat(cluster.operationCount(Operation.READ_POD))
        .as("no second pod read")
        .isEqualTo(reads);
    assertThat(annotations(cluster, "p1")).containsEntry("hami.io/vgpu-node", "n1");

    // the pod is bound and served after the caller's read: the patch, conditioned on that read's
    // resourceVersion, is refused and the allocation the running pod was handed stays
    var before = cluster.readPod(NS, "p1").orElseThrow();
    assertThat(Fixtures.binder(cluster).build().bind(NS, "p1", before.view().uid(), "n1").outcome())
        .isEqualTo(BindOutcome.BOUND);
    assertThat(Fixtures.handoff(cluster).allocateAll("n1").status())
        .isEqualTo(HandoffResult.Status.COMPLETED);
    java.util.Map<String, String> served = annotations(cluster, "p1");
    long patches = cluster.operationCount(Operation.PATCH_POD);

    FilterDecision again = filter.filter(before, List.of("n1"));

    assertThat(again.annotated()).isFalse();
    assertThat(annotations(cluster, "p1"))
        .isEqualTo(served)
        .containsEntry("hami.io/bind-phase", "success");
    assertThat(cluster.operationCount(Operation.PATCH_POD))
        .as("one refused patch")
        .isEqualTo(patches + 1);
  }
}
