package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.StalledBindLostLockTest.StepClock;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review (breaker) of {@code BindLocks.confirmed}: the Binding uses the confirmation begun beside
 * the pod LISTs only if it began at most {@code fresh} (1 s here) earlier, "else confirms again".
 * On acd9b41 it returned a stale answer that was a failure as well ({@code lost.isPresent() ||
 * fresh}): a backend failure of the early GET (the store already retried it) failed a bind whose
 * own GET right before the Binding, seconds later, would have succeeded, as the blocking flow's
 * does. A stale answer that the lock is lost (CONTENDED) is final and may be reused; a failure to
 * read is not.
 */
class ConfirmationStaleFailureTest {

  final InMemoryCluster cluster = InMemoryCluster.create();
  final StepClock clock = new StepClock();
  final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  @Test
  void aStaleFailedConfirmationIsRepeatedBeforeTheBinding() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    AtomicInteger reads = new AtomicInteger();
    LockStore blip = // p1's lock reads its store only to confirm it: the first GET fails
        new ForwardingLockStore(cluster.lockStore()) {
          @Override
          public Optional<String> read(String node, String key) throws LockBackendException {
            if (reads.incrementAndGet() == 1) {
              throw new LockBackendException(
                  LockBackendException.Kind.UNAVAILABLE, "GET node n1: 503 (after retries)", null);
            }
            return super.read(node, key);
          }
        };
    AtomicBoolean slow = new AtomicBoolean(true);
    ForwardingCluster slowList = // the pod LIST takes 2 s: the early answer is stale
        new ForwardingCluster(cluster, null) {
          @Override
          protected void beforeRead(String what) {
            if (what.startsWith("listing the pods") && slow.compareAndSet(true, false)) {
              clock.advance(Duration.ofSeconds(2));
            }
          }
        };
    NodeLock lock = Fixtures.lockOver(blip, cluster, clock, LOCK_KEY);
    PodBinder binder =
        PodBinder.builder(slowList, cluster, REGISTRY, NodeLockProvider.cached(k -> lock))
            .clock(clock)
            .build();

    BindResult r = binder.bindAsync(NS, "p1", p1.uid(), "n1", pool).get(10, TimeUnit.SECONDS);

    assertThat(slow).as("the pod LIST ran").isFalse();
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(reads).as("the stale failed confirmation repeated").hasValue(2);
    assertThat(lockValue(cluster, "n1")).as("kept for the device plugin").isNotNull();
  }
}
