package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.view.PodView;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Breaker (held): a running pod on the node whose allocated annotation became undecodable after the
 * Filter (its memory field garbled) is never dropped from the usage under the lock: the write-
 * first bind of a pod whose Filter chose that pod's card does not bind (the node's usage is
 * unknown), and ends cleaned up with the lock released.
 */
class MalformedNeighbourTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  @Test
  void anUndecodableNeighbourIsNeverCountedAsFree() {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    cluster.addPod(
        pod("other", 1, 10000, 30).toBuilder()
            .phase(PodView.Phase.RUNNING)
            .annotations(
                Map.of(
                    ALLOCATED,
                    "GPU-n1-0,NVIDIA,10000x,30:;",
                    TO_ALLOCATE,
                    ";",
                    "hami.io/vgpu-node",
                    "n1",
                    "hami.io/bind-phase",
                    "success"))
            .build(),
        Optional.of("n1"));

    BindResult r = binder(cluster).build().bind(NS, "p1", p1.uid(), "n1");

    assertThat(r.outcome()).as(r.reason()).isNotEqualTo(BindOutcome.BOUND);
    assertThat(r.reason()).contains("undecodable");
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p1"))
        .doesNotContainKeys("hami.io/bind-phase", "hami.io/bind-time");
  }
}
