package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.NOW;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Fault;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.device.spi.view.PodView;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Breaker: the allocation PATCH of incarnation U1 of pod p1 meets a 409 (the pod changed: its
 * deletion began), and by the re-read ({@code RetriedBind#changedMeanwhile}) p1 is another
 * incarnation U2 (a StatefulSet re-creates a pod under the same name), already bound to the node by
 * this flow. The bind asked for U1 must not answer BOUND for U2: kube-scheduler was told the pod it
 * asked for (U1, gone) was bound, the result claims U2's devices as this call's, and the locks are
 * kept "for the hand-off" of a pod this call never bound.
 */
class RecreatedPodAfterConflictTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  @Test
  void aConflictThenAnotherIncarnationBoundIsNotThisBindsBound() throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    PodView u1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    Fixtures.filteredOnto(cluster, u1, "n1");
    PodView u2 =
        pod("p1", 1, 4000, 30).toBuilder()
            .uid("uid-recreated")
            .annotations(
                Map.of(
                    ALLOCATED,
                    "GPU-n1-1,NVIDIA,4000,30:;",
                    TO_ALLOCATE,
                    "GPU-n1-1,NVIDIA,4000,30:;",
                    "hami.io/vgpu-node",
                    "n1",
                    "hami.io/bind-phase",
                    "allocating",
                    "hami.io/bind-time",
                    Long.toString(NOW.getEpochSecond())))
            .build();
    AtomicInteger reads = new AtomicInteger();
    AtomicInteger patches = new AtomicInteger();
    cluster.faults(
        (op, target) -> {
          if (!target.equals(NS + "/p1")) {
            return Fault.NONE;
          }
          if (op == Operation.PATCH_POD && patches.incrementAndGet() == 1) {
            cluster.markUnschedulable(NS, "p1"); // U1 changed: the allocation PATCH gets a 409
          } else if (op == Operation.READ_POD && reads.incrementAndGet() == 2) {
            cluster.deletePod(NS, "p1"); // the re-read after the 409 finds U2, bound here
            cluster.addPod(u2, Optional.of("n1"));
          }
          return Fault.NONE;
        });

    BindResult r = binder(cluster).build().bind(NS, "p1", u1.uid(), "n1");

    assertThat(patches.get()).as("the allocation PATCH was attempted").isGreaterThanOrEqualTo(1);
    assertThat(r.outcome())
        .as("bind of incarnation %s answered for %s: %s", u1.uid(), u2.uid(), r.reason())
        .isNotEqualTo(BindOutcome.BOUND);
    assertThat(r.locksHeld()).as("no lock kept for a pod this call did not bind").isFalse();
  }
}
