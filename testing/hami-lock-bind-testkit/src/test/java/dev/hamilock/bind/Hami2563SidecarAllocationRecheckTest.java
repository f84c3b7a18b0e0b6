package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.container;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 fault 2 at bind time (HAMi#2563): the binder re-checks the Filter's allocation under the
 * node lock ({@code AllocationCheck}) with the same sidecar rule as the fit. A Filter allocation
 * written by a scheduler that treats a native sidecar as a run-to-completion init container (HAMi
 * before PR#2723, this library before the fix) puts a 8000 MiB sidecar and a 8000 MiB app container
 * on one 15360 MiB T4; the re-check must refuse it and the re-fit give the app the other card.
 */
class Hami2563SidecarAllocationRecheckTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  @Test
  void aFilterAllocationPuttingSidecarAndAppOnOneCardIsRefitted() throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    PodView p =
        PodView.builder(NS, "p1")
            .initContainers(List.of(container("proxy", 1, 8000, 0).withRestartPolicy("Always")))
            .containers(List.of(container("app", 1, 8000, 0)))
            .build();
    cluster.addPod(p);
    String card0 = gpu("n1", 0) + ",NVIDIA,8000,0:";
    String stale = card0 + ";" + card0 + ";";
    cluster.patchPodMetadata(
        NS,
        "p1",
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, stale)
            .setAnnotation(ALLOCATED, stale)
            .setAnnotation("hami.io/vgpu-node", "n1")
            .setAnnotation("hami.io/vgpu-time", "1")
            .setLabel("hami.io/vgpu-node", "n1")
            .build());

    BindResult r = binder(cluster).build().bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.allocationSource()).isEqualTo(AllocationSource.REFITTED);
    List<List<ContainerDevice>> written =
        PodDevicesCodec.decode(annotations(cluster, "p1").get(ALLOCATED));
    assertThat(written).hasSize(2);
    assertThat(written.get(0).get(0).uuid())
        .as("sidecar and app run together: two cards")
        .isNotEqualTo(written.get(1).get(0).uuid());
  }
}
