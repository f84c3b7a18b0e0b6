package dev.hamilock.bind;

import static dev.hamilock.bind.ConfirmationAwaitInterruptTest.awaitInterruptTaken;
import static dev.hamilock.bind.ConfirmationAwaitInterruptTest.awaitThreadWaitingIn;
import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.StalledBindLostLockTest.StepClock;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review (breaker): the confirmation begun beside the pod LISTs finds the lock older than half its
 * timeout and re-stamps it (a PATCH on the pool thread, which changes the value this process holds)
 * while the bind's thread, interrupted, waits for it in {@code BindLocks.confirmed}. The bind must
 * stop INTERRUPTED before the Binding and its clean-up release the re-stamped value (not the one it
 * acquired, no longer on the node), the re-stamp's memo seen across threads. Holds.
 */
class ConfirmationRestampInterruptTest {

  final InMemoryCluster cluster = InMemoryCluster.create();
  final StepClock clock = new StepClock();
  final ExecutorService pool = Executors.newCachedThreadPool();
  final CountDownLatch restamping = new CountDownLatch(1);
  final CountDownLatch restampMayWrite = new CountDownLatch(1);
  final AtomicInteger restamps = new AtomicInteger();
  final AtomicReference<Runnable> confirmation = new AtomicReference<>();

  @AfterEach
  void stop() {
    restampMayWrite.countDown();
    pool.shutdownNow();
  }

  /** The cluster's store, refusing an interrupted thread; the re-stamp held until released. */
  final LockStore store =
      new ForwardingLockStore(cluster.lockStore()) {
        @Override
        protected void beforeRequest(String what) throws LockBackendException {
          refuseIfInterrupted(what);
        }

        @Override
        public CasResult replaceIfEquals(String node, String key, String expected, String value)
            throws LockBackendException {
          restamping.countDown();
          try {
            if (!restampMayWrite.await(20, TimeUnit.SECONDS)) {
              throw new AssertionError("the test never let the re-stamp write");
            }
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
          CasResult r = super.replaceIfEquals(node, key, expected, value);
          restamps.incrementAndGet();
          return r;
        }
      };

  /** The pool, the confirmation kept back until the pod LIST has moved the clock. */
  final Executor executor =
      task -> {
        boolean fromConfirmBeside =
            StackWalker.getInstance()
                .walk(
                    s ->
                        s.anyMatch(
                            f ->
                                f.getClassName().equals(BindLocks.class.getName())
                                    && f.getMethodName().equals("confirmBeside")));
        if (fromConfirmBeside) {
          confirmation.set(task);
          return;
        }
        pool.execute(task);
      };

  @Test
  void anInterruptWhileAwaitingARestampingConfirmationReleasesTheRestampedLock() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    ForwardingCluster reader =
        new ForwardingCluster(cluster, null) {
          @Override
          protected void beforeRead(String what) {
            if (what.startsWith("listing the pods") && confirmation.get() != null) {
              Runnable k = confirmation.getAndSet(null);
              clock.advance(Duration.ofMinutes(3)); // past half the 5 min timeout: re-stamp
              pool.execute(k);
              try {
                assertThat(restamping.await(10, TimeUnit.SECONDS)).isTrue();
              } catch (InterruptedException e) {
                throw new AssertionError(e);
              }
            }
          }
        };
    NodeLock lock = Fixtures.lockOver(store, cluster, clock, LOCK_KEY);
    PodBinder binder =
        PodBinder.builder(reader, cluster, REGISTRY, NodeLockProvider.cached(k -> lock))
            .clock(clock)
            .build();

    var result = binder.bindAsync(NS, "p1", p1.uid(), "n1", executor);
    assertThat(restamping.await(10, TimeUnit.SECONDS)).as("the re-stamp started").isTrue();
    String acquired = lockValue(cluster, "n1");
    Thread waiting = awaitThreadWaitingIn("confirmed");
    waiting.interrupt();
    awaitInterruptTaken(waiting);
    restampMayWrite.countDown();
    BindResult r = result.get(10, TimeUnit.SECONDS);

    assertThat(restamps).as("the confirmation re-stamped the lock").hasValue(1);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.failure().orElseThrow().kind()).isEqualTo(FlowFailure.Kind.INTERRUPTED);
    assertThat(cluster.readPod(NS, "p1").orElseThrow().nodeName()).as("no Binding").isEmpty();
    assertThat(annotations(cluster, "p1")).doesNotContainKey("hami.io/bind-phase");
    assertThat(r.cleanupProblems()).isEmpty();
    assertThat(lockValue(cluster, "n1"))
        .as("the re-stamped lock (acquired as %s) after the bind", acquired)
        .isNull();
  }
}
