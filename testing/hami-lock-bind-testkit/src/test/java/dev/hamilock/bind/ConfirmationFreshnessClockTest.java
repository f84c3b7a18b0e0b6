package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.hamilock.bind.StalledBindLostLockTest.StepClock;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
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
 * {@code BindLocks.confirmed} judges the confirmation begun beside the LISTs young by the binder's
 * clock ({@link PodBinder.Builder#clock}, documented as the source of {@code hami.io/bind-time} and
 * step durations only) and by {@link System#nanoTime} both. Found by a review on 2026-12-04: on
 * acd9b41 it used the binder's clock alone, so a binder whose clock does not move with real time
 * (fixed, as this test kit's binders; a coarse {@code Clock.tick}; a wall clock stepped back by
 * NTP) reused a confirmation of any age, and a bind stalled past the lock timeout after it POSTed
 * its Binding on a lock another scheduler had taken over: two pods on one card. HamiStack gives
 * both the same clock, so only a {@code PodBinder} built directly was exposed.
 */
class ConfirmationFreshnessClockTest {

  final InMemoryCluster cluster = InMemoryCluster.create();
  final StepClock locksClock = new StepClock();

  /** The binder's clock: the bind-time annotations' source, fixed (a test's, or a coarse tick). */
  final Clock binderClock = Clock.fixed(Instant.parse("2026-06-14T15:00:00Z"), ZoneOffset.UTC);

  @Test
  void aConfirmationIsStaleByTheLocksTimeNotOnlyByTheBindersClock() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 12000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    cluster.addPod(pod("p2", 1, 12000, 30));
    NodeLock otherScheduler = Fixtures.lockOver(cluster.lockStore(), cluster, locksClock, LOCK_KEY);
    LockOwner p2 = LockOwner.of(NS, "p2");
    CountDownLatch confirmed = new CountDownLatch(1);
    LockStore counting =
        new ForwardingLockStore(cluster.lockStore()) {
          @Override
          public Optional<String> read(String node, String key) throws LockBackendException {
            Optional<String> v = super.read(node, key);
            confirmed.countDown();
            return v;
          }
        };
    NodeLock mine = Fixtures.lockOver(counting, cluster, locksClock, LOCK_KEY);
    AtomicBoolean stalled = new AtomicBoolean();
    List<AcquireOutcome> takeover = new ArrayList<>();
    ForwardingCluster stallingList =
        new ForwardingCluster(cluster, null) {
          @Override
          protected void beforeRead(String what) {
            if (!what.startsWith("listing the pods") || !stalled.compareAndSet(false, true)) {
              return;
            }
            try { // the confirmation beside this LIST has read the lock: stall, taken over
              assertThat(confirmed.await(5, TimeUnit.SECONDS)).isTrue();
              assertThat(catchThrowable(() -> otherScheduler.acquire("n1", p2)))
                  .isInstanceOf(LockContentionException.class);
              // a real stall (the bind's thread paused; at least 1.1 s, so no race) of which
              // the locks' clock shows 5m1s: the takeover needs an expired lock
              Thread.sleep(1100);
              locksClock.advance(Duration.ofMinutes(5).plusSeconds(1));
              takeover.add(otherScheduler.acquire("n1", p2));
            } catch (Exception e) {
              throw new AssertionError(e);
            }
          }
        };
    ExecutorService steps = Executors.newFixedThreadPool(8);
    BindResult r;
    try (LogCapture log = LogCapture.start()) {
      r =
          PodBinder.builder(
                  stallingList, cluster, Fixtures.REGISTRY, NodeLockProvider.cached(k -> mine))
              .clock(binderClock)
              .build()
              .bindAsync(NS, "p1", p1.uid(), "n1", steps)
              .get(30, TimeUnit.SECONDS);
      assertThat(log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - node lock .* no longer held"))
          .hasSize(1);
    } finally {
      steps.shutdownNow();
    }

    assertThat(stalled).isTrue();
    assertThat(takeover).containsExactly(AcquireOutcome.TOOK_OVER_EXPIRED);
    assertThat(cluster.readPod(NS, "p1").orElseThrow().nodeName())
        .as("no Binding POSTed on the lock p2's scheduler took over")
        .isEmpty();
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.CONTENDED);
    assertThat(lockValue(cluster, "n1")).isEqualTo("2026-06-14T15:05:01Z,default,p2");
  }
}
