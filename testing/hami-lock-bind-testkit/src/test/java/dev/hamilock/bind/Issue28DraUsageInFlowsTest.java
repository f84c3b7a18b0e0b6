package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Fault;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 item 1 in the flows: the Filter and the re-fit under the lock count what DRA allocated
 * (through {@code ClusterReader.readDra}), and a device they cannot map to a registered card makes
 * its node suspect, never free.
 */
class Issue28DraUsageInFlowsTest {
  static final String DRIVER = "gpu.nvidia.com";

  final InMemoryCluster cluster = InMemoryCluster.create();

  /** NVIDIA's driver's slice of {@code node}: device gpu-i with the uuid of the node's card i. */
  static ResourceSliceView slice(String node, int cards) {
    List<ResourceSliceView.Device> devices =
        java.util.stream.IntStream.range(0, cards)
            .mapToObj(
                i ->
                    new ResourceSliceView.Device(
                        "gpu-" + i, Map.of("uuid", gpu(node, i)), Map.of()))
            .toList();
    return new ResourceSliceView(node + "-gpu", DRIVER, node, 1, node, devices);
  }

  /** An allocated claim taking device {@code device} of {@code node}'s pool exclusively. */
  static ResourceClaimView claim(String name, String node, String device) {
    return new ResourceClaimView(
        NS,
        name,
        "uid-" + name,
        true,
        node,
        List.of(
            new ResourceClaimView.Result(DRIVER, node, device, Optional.empty(), Map.of(), false)),
        Set.of());
  }

  @Test
  void theFilterFailsANodeWhoseOnlyCardAClaimTookAndPicksTheOther() {
    cluster.addNode(node("gpu-1", 1, 15360));
    cluster.addNode(node("gpu-2", 1, 15360));
    cluster.setDra(
        new DraObjects(
            List.of(slice("gpu-1", 1), slice("gpu-2", 1)), List.of(claim("c1", "gpu-1", "gpu-0"))));
    PodView p = cluster.addPod(pod("p1", 1, 1000, 0)).view();

    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY).build().filter(p, List.of("gpu-1", "gpu-2"));

    assertThat(d.node()).contains("gpu-2");
    assertThat(d.failedNodes()).containsOnlyKeys("gpu-1");
  }

  @Test
  void aDeviceNoSliceMapsToACardMakesTheNodeSuspectInTheFilterNeverFree() {
    cluster.addNode(node("gpu-1", 2, 15360));
    cluster.setDra(
        new DraObjects(List.of(slice("gpu-1", 2)), List.of(claim("c1", "gpu-1", "gpu-7"))));
    PodView p = cluster.addPod(pod("p1", 1, 1000, 0)).view();

    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY).build().filter(p, List.of("gpu-1"));

    assertThat(d.node()).isEmpty();
    assertThat(d.failedNodes().get("gpu-1"))
        .contains("DRA allocation of an unknown card")
        .contains("ResourceClaim default/c1 device gpu.nvidia.com/gpu-1/gpu-7");
  }

  @Test
  void theRefitUnderTheLockSeesAClaimAllocatedBetweenTheFitAndTheLock() throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    cluster.setDra(new DraObjects(List.of(slice("gpu-1", 1)), List.of()));
    PodView p = cluster.addPod(pod("p1", 1, 1000, 0)).view();
    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY)
            .writeAnnotations(cluster)
            .build()
            .filter(p, List.of("gpu-1"));
    assertThat(d.node()).contains("gpu-1");
    // kube-scheduler allocates the card to a claim while this pod's bind takes the node lock
    cluster.faults(
        (op, target) -> {
          if (op == Operation.LOCK_WRITE) {
            cluster.setDra(
                new DraObjects(List.of(slice("gpu-1", 1)), List.of(claim("c1", "gpu-1", "gpu-0"))));
          }
          return Fault.NONE;
        });

    BindResult r = binder(cluster).build().bind(NS, "p1", p.uid(), "gpu-1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(r.reason()).contains("the Filter's allocation no longer fits");
    assertThat(r.locksHeld()).isFalse();
    assertThat(cluster.readPod(NS, "p1").orElseThrow().isBound()).isFalse();
  }
}
