package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.CLOCK;
import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.PodView;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review (breaker) of the confirmation begun beside the pod LISTs (issue 25 item 2): {@code
 * BindLocks.release} first waits for a pending confirmation ({@code Confirmation.await}), which
 * waits through interrupts and sets the flag again before it returns, right before the release. The
 * clean-up runs {@link Uninterrupted} because the Kubernetes ports refuse every request of an
 * interrupted thread ({@code AnnotationLockStore.write}: {@code INTERRUPTED} without sending), so
 * an interrupt that arrives while the clean-up waits for the confirmation (an executor's {@code
 * shutdownNow}, a caller's cancel) made the release refused: the node stays locked a whole lock
 * timeout (5 min) for every other pod, though nothing failed but the interrupt.
 */
class ConfirmationAwaitInterruptTest {

  final InMemoryCluster cluster = InMemoryCluster.create();

  /** The confirmation's read (the only read of the lock store in this bind) waits for this. */
  final CountDownLatch confirmationMayRead = new CountDownLatch(1);

  final CountDownLatch confirmationReading = new CountDownLatch(1);

  final AtomicReference<Thread> confirming = new AtomicReference<>();

  /**
   * The cluster's lock store, refusing an interrupted thread's writes as the Kubernetes store does;
   * its first read (the confirmation's) held until {@link #confirmationMayRead}.
   */
  final LockStore store =
      new ForwardingLockStore(cluster.lockStore()) {
        private final AtomicBoolean first = new AtomicBoolean(true);

        @Override
        protected void beforeRequest(String what) throws LockBackendException {
          refuseIfInterrupted(what);
        }

        @Override
        public Optional<String> read(String node, String key) throws LockBackendException {
          if (first.compareAndSet(true, false)) {
            confirming.set(Thread.currentThread());
            confirmationReading.countDown();
            try {
              if (!confirmationMayRead.await(20, TimeUnit.SECONDS)) {
                throw new AssertionError("the test never let the confirmation read");
              }
            } catch (InterruptedException e) {
              throw new AssertionError(e);
            }
          }
          return super.read(node, key);
        }
      };

  /**
   * p1's Filter chose card 0, which another pod has filled since: the bind writes the Filter's
   * allocation first (the confirmation starts on the pool, its read held), finds it no longer fits
   * and nothing else does (DOES_NOT_FIT), clears it and, in {@code release}, waits for the
   * confirmation. The bind's thread is interrupted while it waits, then the confirmation reads.
   */
  @Test
  void anInterruptWhileTheCleanupAwaitsTheConfirmationStillReleasesTheLock() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 12000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    String filtered = annotations(cluster, "p1").get(ALLOCATED);
    Fixtures.addServedPodOn(cluster, filtered.substring(0, filtered.indexOf(',')), 10000);

    BindResult r = interruptedWhileWaitingIn("release", p1);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(annotations(cluster, "p1")).doesNotContainKey("hami.io/bind-phase");
    assertThat(r.cleanupProblems()).as("clean-up problems").isEmpty();
    assertThat(lockValue(cluster, "n1"))
        .as("node lock after the bind ended DOES_NOT_FIT (else held for its 5 min timeout)")
        .isNull();
    assertThat(r.locksHeld()).isFalse();
  }

  /**
   * p1 fits: the bind reaches the Binding and waits there for the confirmation still reading. Its
   * thread is interrupted meanwhile (a cancel, the executor's {@code shutdownNow}); {@code
   * Confirmation.await} waits through it and sets the flag again. The bind must end there, as the
   * confirmation on its own thread would (the ports refuse an interrupted thread's read), not POST
   * the Binding of a bind its caller abandoned; the clean-up still releases the lock.
   */
  @Test
  void anInterruptWhileTheBindingAwaitsTheConfirmationPostsNoBinding() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    BindResult r = interruptedWhileWaitingIn("confirmed", p1);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.failure().orElseThrow().kind()).isEqualTo(FlowFailure.Kind.INTERRUPTED);
    assertThat(cluster.readPod(NS, "p1").orElseThrow().nodeName())
        .as("no Binding posted")
        .isEmpty();
    assertThat(annotations(cluster, "p1")).doesNotContainKey("hami.io/bind-phase");
    assertThat(lockValue(cluster, "n1")).as("node lock after the bind").isNull();
  }

  /**
   * p1's bind on a pool of a thread per step at once, its thread interrupted (an executor's {@code
   * shutdownNow}, a caller's cancel) while it waits in {@code BindLocks.<method>} for the
   * confirmation reading beside, which then reads.
   */
  private BindResult interruptedWhileWaitingIn(String method, PodView p1) throws Exception {
    NodeLock lock = Fixtures.lockOver(store, cluster, CLOCK, LOCK_KEY);
    PodBinder binder =
        PodBinder.builder(
                listsAfterTheConfirmation(), cluster, REGISTRY, NodeLockProvider.cached(k -> lock))
            .clock(CLOCK)
            .build();
    ExecutorService pool = Executors.newCachedThreadPool();
    try {
      var result = binder.bindAsync(NS, "p1", p1.uid(), "n1", pool);
      assertThat(confirmationReading.await(10, TimeUnit.SECONDS))
          .as("the confirmation started on the pool")
          .isTrue();
      Thread waiting = awaitThreadWaitingIn(method);
      assertThat(waiting).as("the confirmation runs beside").isNotSameAs(confirming.get());
      waiting.interrupt();
      awaitInterruptTaken(waiting);
      confirmationMayRead.countDown();
      return result.get(10, TimeUnit.SECONDS);
    } finally {
      confirmationMayRead.countDown();
      pool.shutdownNow();
    }
  }

  /**
   * The cluster whose pod LISTs wait until the confirmation reads on the pool, so that it never
   * runs on the bind's own thread (a pool thread started late would leave it to {@code await}).
   */
  private ForwardingCluster listsAfterTheConfirmation() {
    return new ForwardingCluster(cluster, null) {
      @Override
      protected void beforeRead(String what) {
        try {
          if (what.startsWith("listing the pods")
              && !confirmationReading.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("the confirmation never started on the pool");
          }
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
      }
    };
  }

  /** The thread of this bind waiting in {@code BindLocks.<method>} (10 s at most). */
  static Thread awaitThreadWaitingIn(String method) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    do {
      for (var e : Thread.getAllStackTraces().entrySet()) {
        boolean in =
            Arrays.stream(e.getValue())
                .anyMatch(
                    f ->
                        f.getClassName().equals(BindLocks.class.getName())
                            && f.getMethodName().equals(method));
        if (in && e.getKey().getState() == Thread.State.WAITING) {
          return e.getKey();
        }
      }
      Thread.sleep(5);
    } while (System.nanoTime() < deadline);
    StringBuilder dump = new StringBuilder();
    Thread.getAllStackTraces()
        .forEach(
            (t, frames) ->
                dump.append('\n')
                    .append(t.getName())
                    .append(' ')
                    .append(t.getState())
                    .append(Arrays.toString(Arrays.copyOf(frames, Math.min(frames.length, 12)))));
    throw new AssertionError("no thread waits in BindLocks." + method + dump);
  }

  /** Until {@code t} has taken its interrupt (flag cleared) and waits again (10 s at most). */
  static void awaitInterruptTaken(Thread t) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while ((t.isInterrupted() || t.getState() != Thread.State.WAITING)
        && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(t.isInterrupted()).as("the interrupt taken by the wait").isFalse();
    assertThat(t.getState()).as("waiting again").isEqualTo(Thread.State.WAITING);
  }

  /**
   * The same clean-up on the blocking bind (no confirmation beside): an interrupt that arrives
   * while the clean-up's clear patch is in flight. Before this review's fix the release was refused
   * as well (the flag set again by the interrupt, not by the confirmation); not introduced by the
   * confirmation, fixed by the same change.
   */
  @Test
  void anInterruptDuringTheCleanupsClearPatchStillReleasesTheLock() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 12000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    String filtered = annotations(cluster, "p1").get(ALLOCATED);
    Fixtures.addServedPodOn(cluster, filtered.substring(0, filtered.indexOf(',')), 10000);
    confirmationMayRead.countDown(); // no confirmation here: never held
    AtomicInteger patches = new AtomicInteger();
    ClusterWriter writer =
        new ClusterWriter() {
          @Override
          public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
              throws ClusterException {
            ClusterPod p = cluster.patchPodMetadata(namespace, name, patch);
            if (patches.incrementAndGet() == 2) { // the clean-up's clear patch, answered
              Thread.currentThread().interrupt(); // e.g. a shutdownNow during the clean-up
            }
            return p;
          }

          @Override
          public BindingPostResult bind(
              String namespace, String name, String uid, String rv, String node) {
            return cluster.bind(namespace, name, uid, rv, node);
          }
        };
    NodeLock lock = Fixtures.lockOver(store, cluster, CLOCK, LOCK_KEY);
    BindResult r;
    boolean flagAfter;
    try {
      r =
          PodBinder.builder(cluster, writer, REGISTRY, NodeLockProvider.cached(k -> lock))
              .clock(CLOCK)
              .build()
              .bind(NS, "p1", p1.uid(), "n1");
    } finally {
      flagAfter = Thread.interrupted();
    }

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(r.cleanupProblems()).as("clean-up problems").isEmpty();
    assertThat(lockValue(cluster, "n1")).as("node lock after the bind").isNull();
    assertThat(flagAfter).as("the interrupt is kept for the caller").isTrue();
  }
}
