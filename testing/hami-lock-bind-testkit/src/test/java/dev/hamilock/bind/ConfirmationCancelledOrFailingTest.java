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

import dev.hamilock.bind.cluster.ForkedRead;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.PodView;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The confirmation begun beside the pod LISTs ({@code BindLocks.confirmBeside}) and the forked
 * usage reads ({@code ForkedRead.start}) when the executor drops or delays what it was handed, or
 * the confirmation's GET throws unchecked. Found by a review on 2026-12-04, each case failing on
 * acd9b41: the bind handed its {@code FutureTask} itself to the executor, so an executor cancelling
 * its queued {@code Future}s at shutdown ({@code shutdownNow}, then {@code cancel} on each, as
 * Spring's {@code ExecutorConfigurationSupport.shutdown} does) made {@code get()} throw {@code
 * CancellationException} out of the bind; and an unchecked exception of the lock store's read
 * (fabric8 unmarshals an unparsable body with one) escaped {@code settle} inside the clean-up,
 * before the release. Either way the {@code bindAsync} future completed exceptionally with the node
 * lock held for its 5 min timeout. The executor now gets a wrapper, and {@code confirm} turns every
 * exception into a FAILED stop.
 */
class ConfirmationCancelledOrFailingTest {

  final InMemoryCluster cluster = InMemoryCluster.create();
  final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  /**
   * The pool, but the confirmation ({@code BindLocks.confirmBeside} hands it over) is queued and
   * then cancelled, as a shutting-down executor cancels its queued {@code Future}s; every other
   * task runs.
   */
  Executor cancellingTheConfirmation(AtomicInteger cancelled) {
    return droppingTasksFrom(BindLocks.class.getName(), "confirmBeside", cancelled);
  }

  /**
   * The pool, but every task handed over from {@code className.method} is queued and dropped, as a
   * shutting-down executor drops its queued tasks ({@code shutdownNow}) and cancels those that are
   * {@code Future}s; every other task runs.
   */
  Executor droppingTasksFrom(String className, String method, AtomicInteger dropped) {
    return task -> {
      if (handedOverBy(className, method)) {
        if (task instanceof Future<?> f) {
          f.cancel(true);
        }
        dropped.incrementAndGet();
        return;
      }
      pool.execute(task);
    };
  }

  /** Whether the calling thread is inside {@code className.method}. */
  static boolean handedOverBy(String className, String method) {
    return StackWalker.getInstance()
        .walk(
            s ->
                s.anyMatch(
                    fr ->
                        fr.getClassName().equals(className) && fr.getMethodName().equals(method)));
  }

  /** The cluster's lock store, its read throwing unchecked (counted in {@code reads}). */
  LockStore garbled(AtomicInteger reads) {
    return new ForwardingLockStore(cluster.lockStore()) {
      @Override
      public Optional<String> read(String node, String key) throws LockBackendException {
        reads.incrementAndGet();
        throw new IllegalStateException("unparsable node body (an HTML error page)");
      }
    };
  }

  PodBinder binder(LockStore store) {
    NodeLock lock = Fixtures.lockOver(store, cluster, CLOCK, LOCK_KEY);
    return PodBinder.builder(cluster, cluster, REGISTRY, NodeLockProvider.cached(k -> lock))
        .clock(CLOCK)
        .build();
  }

  /** p1 filtered onto n1; with {@code filled}, another pod has since filled its card. */
  PodView p1(boolean filled) {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, filled ? 12000 : 10000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    if (filled) {
      String filtered = annotations(cluster, "p1").get(ALLOCATED);
      Fixtures.addServedPodOn(cluster, filtered.substring(0, filtered.indexOf(',')), 10000);
    }
    return p1;
  }

  /** The bind's answer; fails naming the exception if the future completed exceptionally. */
  static BindResult answer(CompletableFuture<BindResult> f) throws Exception {
    try {
      return f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw new AssertionError("the bind threw instead of answering: " + e.getCause(), e);
    }
  }

  /** p1 fits: its cancelled confirmation must be run (or redone), not thrown at the Binding. */
  @Test
  void aCancelledConfirmationBeforeTheBindingNeitherThrowsNorLeavesTheLock() throws Exception {
    PodView p1 = p1(false);
    AtomicInteger cancelled = new AtomicInteger();
    CompletableFuture<BindResult> f =
        binder(new ForwardingLockStore(cluster.lockStore()))
            .bindAsync(NS, "p1", p1.uid(), "n1", cancellingTheConfirmation(cancelled));
    BindResult r;
    try {
      r = answer(f);
    } finally {
      assertThat(cancelled).as("the confirmation was handed over and cancelled").hasValue(1);
    }
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(lockValue(cluster, "n1")).as("kept for the device plugin").isNotNull();
  }

  /**
   * p1 no longer fits: the clean-up's settle must not throw the cancellation before the release.
   */
  @Test
  void aCancelledConfirmationDoesNotStopTheCleanupsRelease() throws Exception {
    PodView p1 = p1(true);
    AtomicInteger cancelled = new AtomicInteger();
    CompletableFuture<BindResult> f =
        binder(new ForwardingLockStore(cluster.lockStore()))
            .bindAsync(NS, "p1", p1.uid(), "n1", cancellingTheConfirmation(cancelled));
    BindResult r;
    try {
      r = answer(f);
    } finally {
      assertThat(cancelled).hasValue(1);
      assertThat(lockValue(cluster, "n1"))
          .as("node lock after the bind ended (else held for its 5 min timeout)")
          .isNull();
    }
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(annotations(cluster, "p1")).doesNotContainKey("hami.io/bind-phase");
  }

  /**
   * p1 no longer fits and the confirmation's GET throws unchecked: the bind never needed that
   * answer (it never binds), so the clean-up must still release; before the confirmation ran
   * beside, this bind never read the lock at all.
   */
  @Test
  void anUncheckedFailureOfAnUnneededConfirmationDoesNotStopTheRelease() throws Exception {
    PodView p1 = p1(true);
    AtomicInteger reads = new AtomicInteger();
    CompletableFuture<BindResult> f =
        binder(garbled(reads)).bindAsync(NS, "p1", p1.uid(), "n1", pool);
    BindResult r;
    try {
      r = answer(f);
    } finally {
      assertThat(reads).as("the confirmation read").hasValue(1);
      assertThat(lockValue(cluster, "n1"))
          .as("node lock after the bind ended (else held for its 5 min timeout)")
          .isNull();
    }
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(annotations(cluster, "p1")).doesNotContainKey("hami.io/bind-phase");
  }

  /**
   * The same for the usage reads forked beside the bind's own ({@code ForkedRead.start} hands its
   * {@code FutureTask} itself to the executor; older than the confirmation, same fault): a
   * cancelled read escapes {@code ForkedRead.join} as {@code CancellationException}, the bind
   * throws and the lock stays. {@code join} runs a read no thread started, so a dropped one must be
   * read here.
   */
  @Test
  void aCancelledForkedReadNeitherThrowsNorLeavesTheLock() throws Exception {
    PodView p1 = p1(false);
    AtomicInteger dropped = new AtomicInteger();
    CompletableFuture<BindResult> f =
        binder(new ForwardingLockStore(cluster.lockStore()))
            .bindAsync(
                NS,
                "p1",
                p1.uid(),
                "n1",
                droppingTasksFrom(ForkedRead.class.getName(), "start", dropped));
    BindResult r;
    try {
      r = answer(f);
    } finally {
      assertThat(dropped).as("forked reads handed over and dropped").hasPositiveValue();
    }
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(lockValue(cluster, "n1")).as("kept for the device plugin").isNotNull();
  }

  /**
   * An executor that runs the confirmation only after the bind answered (a queue far behind): the
   * bind ran it itself (its clean-up settles it), so the late run reads and re-stamps nothing and
   * the released lock stays released. Holds.
   */
  @Test
  void aConfirmationTheExecutorRunsAfterTheBindAnsweredDoesNothing() throws Exception {
    PodView p1 = p1(true);
    AtomicInteger reads = new AtomicInteger();
    LockStore counting =
        new ForwardingLockStore(cluster.lockStore()) {
          @Override
          public Optional<String> read(String node, String key) throws LockBackendException {
            reads.incrementAndGet();
            return super.read(node, key);
          }
        };
    java.util.List<Runnable> late = new java.util.concurrent.CopyOnWriteArrayList<>();
    Executor behind =
        task -> {
          if (handedOverBy(BindLocks.class.getName(), "confirmBeside")) {
            late.add(task);
            return;
          }
          pool.execute(task);
        };
    BindResult r = answer(binder(counting).bindAsync(NS, "p1", p1.uid(), "n1", behind));
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(reads).as("the confirmation, run by the clean-up").hasValue(1);
    assertThat(lockValue(cluster, "n1")).isNull();

    assertThat(late).hasSize(1);
    late.get(0).run();

    assertThat(reads).as("no read after the bind answered").hasValue(1);
    assertThat(lockValue(cluster, "n1")).as("still released").isNull();
  }

  /**
   * p1 fits and the confirmation's GET throws unchecked (on the pool beside the LISTs, or on the
   * bind's thread): the confirmation failed, so no Binding, and the bind must still end as a
   * failure with its clean-up (the blocking flow's confirmation throws alike: not new, but the same
   * end). {@code StoreNodeLock.acquire} already turns a judging bug into a typed backend error.
   */
  @Test
  void anUncheckedFailureOfTheConfirmationBeforeTheBindingEndsTheBindCleanedUp() throws Exception {
    PodView p1 = p1(false);
    AtomicInteger reads = new AtomicInteger();
    CompletableFuture<BindResult> f =
        binder(garbled(reads)).bindAsync(NS, "p1", p1.uid(), "n1", pool);
    BindResult r;
    try {
      r = answer(f);
    } finally {
      assertThat(reads)
          .as("the confirmation read, beside or again before the Binding")
          .hasPositiveValue();
      assertThat(lockValue(cluster, "n1"))
          .as("node lock after the bind ended (else held for its 5 min timeout)")
          .isNull();
    }
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(cluster.readPod(NS, "p1").orElseThrow().nodeName()).as("no Binding").isEmpty();
    assertThat(annotations(cluster, "p1")).doesNotContainKey("hami.io/bind-phase");
  }
}
