package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Fault;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review of the write-first bind (issue 25): the Filter's allocation is written before the reads
 * under the lock, and written again when the re-fit (or re-score) chooses otherwise. When that
 * second write fails, the first one is applied all the same, and the clean-up must still clear it.
 */
class WriteFirstCleanupTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  /**
   * p1's Filter chose a card another pod has filled since, so the bind writes the Filter's
   * allocation (write 1: bind phase {@code allocating}, bind time now), re-fits onto the other card
   * and writes that (write 2); someone changes the pod just before write 2 (a label, a status
   * condition: any update moves its resourceVersion), which then fails with {@code second}.
   */
  private BindResult bindFailingTheSecondWrite(Fault second) throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    ExtenderFilter filter =
        ExtenderFilter.builder(cluster, REGISTRY).writeAnnotations(cluster).build();
    assertThat(filter.filter(p1, List.of("n1")).node()).contains("n1");
    String filtered = annotations(cluster, "p1").get(ALLOCATED);
    Fixtures.addServedPodOn(cluster, filtered.substring(0, filtered.indexOf(',')), 10000);
    AtomicInteger patches = new AtomicInteger();
    cluster.faults(
        (op, target) -> {
          if (op == Operation.PATCH_POD
              && target.equals(NS + "/p1")
              && patches.incrementAndGet() == 2) {
            cluster.markUnschedulable(NS, "p1"); // any other update of the pod
            return second;
          }
          return Fault.NONE;
        });
    return binder(cluster).build().bind(NS, "p1", p1.uid(), "n1");
  }

  /**
   * Write 2 meets a 409: CONTENDED, and the clean-up removes write 1's annotations, though its
   * clear patch at write 1's version conflicts too: the pod re-read still holds write 1, the last
   * write answered as applied. Before, it was left on the unbound pod: {@code allocating} with a
   * fresh bind time, which held every other bind on the node back (the hand-off guard) for a lock
   * timeout.
   */
  @Test
  void aConflictOnTheRefitsSecondWriteStillClearsTheFirstWrite() throws Exception {
    BindResult r = bindFailingTheSecondWrite(Fault.NONE); // the change alone makes it a 409

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.CONTENDED);
    assertThat(annotations(cluster, "p1"))
        .as("the failed bind leaves no bind phase or bind time on the unbound pod")
        .doesNotContainKeys("hami.io/bind-phase", "hami.io/bind-time");
    cluster.faults(InMemoryCluster.FaultInjector.NONE);
    cluster.addPod(pod("p2", 1, 4000, 30));
    BindResult r2 = binder(cluster).build().bind(NS, "p2", "", "n1");
    assertThat(r2.outcome())
        .as("another pod's bind on the node afterwards: %s", r2.reason())
        .isEqualTo(BindOutcome.BOUND);
  }

  /**
   * The same, write 2 timing out unapplied (its outcome unknown to the bind): the clean-up compares
   * the pod with write 2, which never landed, and with write 1, which did, and clears it.
   */
  @Test
  void aSecondWriteTimingOutUnappliedStillClearsTheFirstWrite() throws Exception {
    BindResult r = bindFailingTheSecondWrite(Fault.FAIL_BEFORE);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(annotations(cluster, "p1"))
        .as("the failed bind leaves no bind phase or bind time on the unbound pod")
        .doesNotContainKeys("hami.io/bind-phase", "hami.io/bind-time");
  }
}
