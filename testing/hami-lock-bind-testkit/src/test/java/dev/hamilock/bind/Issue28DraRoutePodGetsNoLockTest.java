package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.locks;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static dev.hamilock.device.spi.HamiAnnotations.VGPU_NODE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 item 2: a pod whose {@code nvidia.com/gpu} kube-scheduler delegated to DRA ({@code
 * status.extendedResourceClaimStatus}) gets its devices from the DRA driver, never from HAMi's
 * device plugin's Allocate: the bind flow binds it without a node lock (nothing would release it)
 * and without HAMi's allocation annotations (they would count its card twice).
 */
class Issue28DraRoutePodGetsNoLockTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  /** A one-card pod whose {@code delegated} resources kube-scheduler gave through DRA. */
  static PodView draPod(String name, Set<String> delegated) {
    return pod(name, 1, 1000, 0).toBuilder().draResources(delegated).build();
  }

  BindResult bind(Set<String> delegated) {
    cluster.addNode(node("gpu-1", 1, 15360));
    String uid = cluster.addPod(draPod("p1", delegated)).view().uid();
    return PodBinder.builder(cluster, cluster, REGISTRY, locks(cluster))
        .clock(Fixtures.CLOCK)
        .build()
        .bind(NS, "p1", uid, "gpu-1");
  }

  @Test
  void aPodWhoseGpusWentTheDraRouteIsBoundWithoutALockOrHamisAllocation() throws Exception {
    BindResult r = bind(Set.of("nvidia.com/gpu"));

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.locksHeld()).isFalse();
    assertThat(r.lockKeys()).isEmpty();
    assertThat(cluster.operationCount(Operation.LOCK_WRITE)).isZero();
    assertThat(cluster.readNode("gpu-1").orElseThrow().annotations()).doesNotContainKey(LOCK_KEY);
    assertThat(cluster.readPod(NS, "p1").orElseThrow().view().annotations())
        .doesNotContainKey(TO_ALLOCATE);
  }

  @Test
  void aPodWithAnotherResourceDelegatedIsLockedAsAnyOther() {
    BindResult r = bind(Set.of("example.com/nic"));

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.locksHeld()).isTrue();
    assertThat(r.lockKeys()).containsExactly(LOCK_KEY);
  }

  @Test
  void aDraRoutePodKeptTheFiltersHamiAllocationAndIsNowBoundWithoutIt() throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    PodView p = cluster.addPod(draPod("p1", Set.of("nvidia.com/gpu"))).view();
    ExtenderFilter.builder(cluster, REGISTRY)
        .writeAnnotations(cluster)
        .build()
        .filter(p, List.of("gpu-1"));
    assertThat(cluster.readPod(NS, "p1").orElseThrow().view().annotations())
        .as("the Filter's allocation")
        .containsKeys(TO_ALLOCATE, ALLOCATED, VGPU_NODE);
    long patches = cluster.operationCount(Operation.PATCH_POD);

    BindResult r =
        PodBinder.builder(cluster, cluster, REGISTRY, locks(cluster))
            .clock(Fixtures.CLOCK)
            .build()
            .bind(NS, "p1", p.uid(), "gpu-1");

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    PodView bound = cluster.readPod(NS, "p1").orElseThrow().view();
    assertThat(bound.annotations())
        .doesNotContainKeys(
            TO_ALLOCATE, ALLOCATED, VGPU_NODE, "hami.io/vgpu-time", "hami.io/bind-phase");
    assertThat(bound.labels()).doesNotContainKey(VGPU_NODE);
    assertThat(cluster.operationCount(Operation.PATCH_POD) - patches)
        .as("one merge patch")
        .isEqualTo(1);
    assertThat(cluster.operationCount(Operation.LOCK_WRITE)).isZero();
  }
}
