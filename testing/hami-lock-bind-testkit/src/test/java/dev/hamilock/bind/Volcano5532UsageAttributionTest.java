package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.usage.NodeMismatch;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.PodUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * volcano#5532: a pod bound to {@code n2} whose {@code hami.io/vgpu-node} says {@code n1} had its
 * 12288 MiB counted on {@code n1}. A bound pod counts on {@code spec.nodeName} only; the mismatch
 * is a typed warning naming the pod and both nodes.
 */
class Volcano5532UsageAttributionTest {
  static final UsageReconstructor USAGE = new UsageReconstructor(REGISTRY);

  /** UsageReconstructor's WARN for the mismatch: captured and asserted, not printed. */
  static final String MISMATCH_WARNING =
      "WARN dev\\.hamilock\\.device\\.spi\\.usage\\.UsageReconstructor - pod default/w is bound to "
          + "node n2 but hami\\.io/vgpu-node says n1";

  private LogCapture log;

  @BeforeEach
  void captureLog() {
    log = LogCapture.start();
  }

  @AfterEach
  void closeLog() {
    log.expect(MISMATCH_WARNING);
    log.close();
  }

  /**
   * A pod whose annotations allocate {@code mem} MiB of {@code uuid}, assigned to {@code
   * annotated}.
   */
  static PodView allocated(String name, String annotated, String uuid, int mem, String boundTo) {
    String v = uuid + ",NVIDIA," + mem + ",0:;";
    return pod(name, 1, mem, 0).toBuilder()
        .annotations(
            Map.of(
                HamiAnnotations.VGPU_NODE,
                annotated,
                TO_ALLOCATE,
                v,
                ALLOCATED,
                v,
                HamiAnnotations.BIND_PHASE,
                "allocating"))
        .nodeName(boundTo)
        .build();
  }

  static long usedMem(NodeUsage u) {
    return u.devices().stream().mapToLong(d -> d.usedmem()).sum();
  }

  @Test
  void aBoundPodCountsOnItsSpecNodeNameOnly() {
    NodeView n1 = node("n1", 1, 16384);
    NodeView n2 = node("n2", 1, 16384);
    PodView w = allocated("w", "n1", gpu("n1", 0), 12288, "n2");

    Map<String, NodeUsage> usage = USAGE.clusterUsage(List.of(n1, n2), List.of(w));

    assertThat(usedMem(usage.get("n1"))).as("never on the annotated node").isZero();
    PodUsage pu = USAGE.podUsage(w).orElseThrow();
    assertThat(pu.nodeName()).isEqualTo("n2");
    assertThat(pu.nodeMismatch()).contains(new NodeMismatch("default/w", "n1", "n2"));
    assertThat(pu.nodeMismatch().orElseThrow().message()).contains("default/w", "n1", "n2");
    // its entries name n1's GPU: on n2 they match no registered device (stale, as HAMi)
    assertThat(usedMem(usage.get("n2"))).isZero();
    assertThat(USAGE.nodeUsage(n1, List.of(w)).devices().get(0).usedmem()).isZero();
    assertThat(log.expect(MISMATCH_WARNING)).isNotEmpty();
  }

  @Test
  void onTheBoundNodeItsEntriesCountWhenTheyNameThatNodesDevices() {
    NodeView n2 = node("n2", 1, 16384);
    PodView w = allocated("w", "n1", gpu("n2", 0), 12288, "n2");

    assertThat(usedMem(USAGE.nodeUsage(n2, List.of(w)))).isEqualTo(12288);
  }

  @Test
  void unboundAndConsistentPodsStillCountOnTheAnnotatedNode() {
    NodeView n1 = node("n1", 1, 16384);
    PodView inFlight = allocated("a", "n1", gpu("n1", 0), 4000, null);
    PodView running = allocated("b", "n1", gpu("n1", 0), 2000, "n1");

    assertThat(usedMem(USAGE.nodeUsage(n1, List.of(inFlight, running)))).isEqualTo(6000);
    assertThat(USAGE.podUsage(running).orElseThrow().nodeMismatch()).isEmpty();
    assertThat(USAGE.podUsage(inFlight).orElseThrow().nodeMismatch()).isEmpty();
  }

  @Test
  void theFilterAndTheBindFlowNoLongerSeeTheGhostOnN1() throws Exception {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(node("n1", 1, 16384));
    cluster.addNode(node("n2", 1, 16384));
    String v = gpu("n1", 0) + ",NVIDIA,12288,0:;";
    cluster.addPod(
        pod("w", 1, 12288, 0).toBuilder()
            .annotations(Map.of(HamiAnnotations.VGPU_NODE, "n1", TO_ALLOCATE, v, ALLOCATED, v))
            .labels(Map.of(HamiAnnotations.VGPU_NODE, "n1"))
            .build(),
        Optional.of("n2"));
    var newcomer = cluster.addPod(pod("p", 1, 8000, 0));

    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY).build().filter(newcomer.view(), List.of("n1"));
    assertThat(d.node())
        .as("8000 MiB fit beside nothing: the ghost 12288 MiB is not on n1")
        .contains("n1");

    BindResult r = Fixtures.binder(cluster).build().bind(NS, "p", newcomer.view().uid(), "n1");
    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
  }
}
