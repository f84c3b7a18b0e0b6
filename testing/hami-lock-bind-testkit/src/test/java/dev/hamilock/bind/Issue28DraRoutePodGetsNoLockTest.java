package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.locks;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import java.util.Optional;
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

  /** The cluster, reporting {@code resources} as delegated to DRA on every pod read. */
  ForwardingCluster delegating(Set<String> resources) {
    return new ForwardingCluster(cluster, cluster) {
      @Override
      public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
        return super.readPod(namespace, name)
            .map(p -> new ClusterPod(p.view(), p.nodeName(), p.resourceVersion(), resources));
      }
    };
  }

  BindResult bind(Set<String> delegated) {
    cluster.addNode(node("gpu-1", 1, 15360));
    String uid = cluster.addPod(pod("p1", 1, 1000, 0)).view().uid();
    ForwardingCluster ports = delegating(delegated);
    return PodBinder.builder(ports, ports, REGISTRY, locks(cluster))
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
}
