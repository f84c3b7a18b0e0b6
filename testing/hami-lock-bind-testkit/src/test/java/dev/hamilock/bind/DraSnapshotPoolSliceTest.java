package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.locks;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static dev.hamilock.bind.Issue28DraUsageInFlowsTest.DRIVER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Breaker (issue 25, the checked DRA snapshot): the snapshot is trusted only if it shows no DRA
 * device on the node ({@code DraObjects.devicesOn}), because "a node where DRA publishes devices is
 * read consistently so that a lagging snapshot cannot hide one written long before". The usage
 * counts a claim's device on a node by its slice's {@code spec.nodeName}, else the claim's
 * allocation node, else the <em>pool name</em> ({@code DraUsage}); {@code devicesOn} looks at the
 * first two only. A driver that publishes the node's cards in a pool named after the node without
 * {@code spec.nodeName} (a node selector) has devices on the node by the usage's rule, yet its
 * snapshot is trusted: a wholly DRA pod's claim stored long before, missing from the lagging
 * snapshot, is not counted and its card is given twice. (KubernetesWire lists only the slices with
 * the node's {@code spec.nodeName}; a port may return more, and an informer-backed {@code
 * readDraForFilter} does.)
 */
class DraSnapshotPoolSliceTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  /**
   * The cluster with a lagging snapshot and a consistent read of every DRA object (a port may
   * return more than the node's slices: ClusterReader#readDra), counting the consistent reads.
   */
  static final class Reader extends ForwardingCluster {
    final DraObjects snapshot;
    final DraObjects stored;
    final AtomicInteger consistentReads = new AtomicInteger();

    Reader(InMemoryCluster cluster, DraObjects snapshot, DraObjects stored) {
      super(cluster, cluster);
      this.snapshot = snapshot;
      this.stored = stored;
    }

    @Override
    public DraObjects readDra(Collection<String> nodes) {
      consistentReads.incrementAndGet();
      return stored;
    }

    @Override
    public DraObjects readDraForFilter(Collection<String> nodes) {
      return snapshot;
    }
  }

  /**
   * The node's cards in pool {@code node}, the slice selecting the node otherwise (no nodeName).
   */
  static ResourceSliceView poolSlice(String node, int cards) {
    List<ResourceSliceView.Device> devices =
        IntStream.range(0, cards)
            .mapToObj(
                i ->
                    new ResourceSliceView.Device(
                        "gpu-" + i, Map.of("uuid", gpu(node, i)), Map.of()))
            .toList();
    return new ResourceSliceView(node + "-gpu", DRIVER, node, 1, "", devices);
  }

  /** A wholly DRA pod's claim on device {@code device} of pool gpu-1, no single-node selector. */
  static ResourceClaimView claim(String device) {
    return new ResourceClaimView(
        NS,
        "dra-only",
        "uid-dra-only",
        true,
        "",
        List.of(
            new ResourceClaimView.Result(
                DRIVER, "gpu-1", device, Optional.empty(), Map.of(), false)),
        Set.of("uid-other"));
  }

  private int filteredCard(PodView p) {
    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY)
            .writeAnnotations(cluster)
            .build()
            .filter(p, List.of("gpu-1"));
    assertThat(d.node()).as("%s", d).contains("gpu-1");
    return Fixtures.annotations(cluster, p.name()).toString().contains(gpu("gpu-1", 0)) ? 0 : 1;
  }

  private static String card(BindResult r) {
    return r.devices().orElseThrow().byVendor().values().iterator().next().get(0).get(0).uuid();
  }

  @Test
  void aSnapshotShowingThePoolSliceOfTheNodeIsReadConsistently() {
    cluster.addNode(node("gpu-1", 2, 15360));
    ResourceSliceView slice = poolSlice("gpu-1", 2);
    cluster.setDra(new DraObjects(List.of(slice), List.of()));
    PodView p = cluster.addPod(pod("p1", 1, 15360, 0)).view();
    int card = filteredCard(p);
    String claimed = gpu("gpu-1", card);
    // stored long before the bind; the snapshot lags and shows the slice but not the claim
    cluster.setDra(new DraObjects(List.of(slice), List.of(claim("gpu-" + card))));
    Reader reader =
        new Reader(
            cluster,
            new DraObjects(List.of(slice), List.of()),
            new DraObjects(List.of(slice), List.of(claim("gpu-" + card))));

    BindResult r =
        PodBinder.builder(reader, reader, REGISTRY, locks(cluster))
            .clock(Fixtures.CLOCK)
            .retryPolicy(Fixtures.RETRY)
            .build()
            .bind(NS, "p1", p.uid(), "gpu-1");

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(card(r)).as("not the card the DRA claim holds").isNotEqualTo(claimed);
    assertThat(reader.consistentReads).as("the snapshot shows a DRA slice of the node").hasValue(1);
  }
}
