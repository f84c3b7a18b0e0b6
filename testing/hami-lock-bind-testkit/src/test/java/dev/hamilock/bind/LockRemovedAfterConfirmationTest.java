package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.CLOCK;
import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Review (breaker) of the safety argument of the confirmation begun beside the pod LISTs: a lock
 * removed by another writer after that confirmation (here: while p1's LIST is in flight) finds p1
 * in flight, so the next holder's hand-off guard backs off and no card is given twice.
 */
class LockRemovedAfterConfirmationTest {

  final InMemoryCluster cluster = InMemoryCluster.create();

  @Test
  void aLockRemovedAfterTheConfirmationLeavesTheNextHolderContended() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 12000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    cluster.addPod(pod("p2", 1, 12000, 30));
    CountDownLatch confirmed = new CountDownLatch(1);
    LockStore store = cluster.lockStore();
    LockStore counting =
        new ForwardingLockStore(store) { // p1's lock reads its store only to confirm it
          @Override
          public Optional<String> read(String node, String key) throws LockBackendException {
            Optional<String> v = super.read(node, key);
            confirmed.countDown();
            return v;
          }
        };
    NodeLock mine = Fixtures.lockOver(counting, cluster, CLOCK, LOCK_KEY);
    AtomicBoolean stalled = new AtomicBoolean();
    List<BindResult> next = new ArrayList<>();
    ForwardingCluster removingDuringTheList =
        new ForwardingCluster(cluster, cluster) {
          @Override
          protected void beforeRead(String what) {
            if (!what.startsWith("listing the pods") || !stalled.compareAndSet(false, true)) {
              return;
            }
            try { // p1's lock confirmed; now removed by another writer, and p2's bind comes
              assertThat(confirmed.await(5, TimeUnit.SECONDS)).isTrue();
              String v = lockValue(cluster, "n1");
              assertThat(store.deleteIfEquals("n1", LOCK_KEY, v)).isTrue();
              next.add(Fixtures.binder(cluster).build().bind(NS, "p2", "", "n1"));
            } catch (Exception e) {
              throw new AssertionError(e);
            }
          }
        };
    ExecutorService steps = Executors.newFixedThreadPool(4);
    BindResult r;
    try {
      r =
          PodBinder.builder(
                  removingDuringTheList,
                  removingDuringTheList,
                  REGISTRY,
                  NodeLockProvider.cached(k -> mine))
              .clock(CLOCK)
              .build()
              .bindAsync(NS, "p1", p1.uid(), "n1", steps)
              .get(30, TimeUnit.SECONDS);
    } finally {
      steps.shutdownNow();
    }

    assertThat(stalled).isTrue();
    assertThat(next).hasSize(1);
    assertThat(next.get(0).outcome())
        .as("p2 under the removed lock: %s", next.get(0).reason())
        .isEqualTo(BindOutcome.CONTENDED);
    assertThat(next.get(0).reason()).contains("is still waiting for the device plugin");
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(cluster.pods().stream().filter(p -> p.nodeName().isPresent()).count())
        .as("pods bound on the one card")
        .isEqualTo(1);
  }
}
