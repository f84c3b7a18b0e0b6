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
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.util.List;
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
      new LockStore() {
        private final AtomicBoolean first = new AtomicBoolean(true);

        private void refuse(String what) throws LockBackendException {
          if (Thread.currentThread().isInterrupted()) {
            throw new LockBackendException(
                LockBackendException.Kind.INTERRUPTED, what + " was interrupted", null);
          }
        }

        @Override
        public Optional<String> read(String node, String key) throws LockBackendException {
          refuse("read");
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
          return cluster.lockStore().read(node, key);
        }

        @Override
        public CasResult createIfAbsent(String node, String key, String value)
            throws LockBackendException {
          refuse("create");
          return cluster.lockStore().createIfAbsent(node, key, value);
        }

        @Override
        public CasResult replaceIfEquals(String node, String key, String expected, String value)
            throws LockBackendException {
          refuse("replace");
          return cluster.lockStore().replaceIfEquals(node, key, expected, value);
        }

        @Override
        public boolean deleteIfEquals(String node, String key, String expected)
            throws LockBackendException {
          refuse("delete");
          return cluster.lockStore().deleteIfEquals(node, key, expected);
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
    assertThat(
            ExtenderFilter.builder(cluster, REGISTRY)
                .writeAnnotations(cluster)
                .build()
                .filter(p1, List.of("n1"))
                .node())
        .contains("n1");
    String filtered = annotations(cluster, "p1").get(ALLOCATED);
    Fixtures.addServedPodOn(cluster, filtered.substring(0, filtered.indexOf(',')), 10000);

    AtomicInteger patches = new AtomicInteger();
    AtomicReference<Thread> cleaner = new AtomicReference<>();
    ClusterWriter writer =
        new ClusterWriter() {
          @Override
          public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
              throws ClusterException {
            ClusterPod p = cluster.patchPodMetadata(namespace, name, patch);
            if (patches.incrementAndGet() == 2) { // the clean-up's clear patch
              cleaner.set(Thread.currentThread());
            }
            return p;
          }

          @Override
          public BindingPostResult bind(
              String namespace, String name, String uid, String rv, String node) {
            return cluster.bind(namespace, name, uid, rv, node);
          }
        };
    NodeLock lock =
        StoreNodeLock.create(
            store,
            LockSettings.builder()
                .key(LOCK_KEY)
                .lockTimeout(Duration.ofMinutes(5))
                .clock(CLOCK)
                .ownerLiveness(cluster.ownerLiveness())
                .build());
    PodBinder binder =
        PodBinder.builder(cluster, writer, REGISTRY, NodeLockProvider.cached(k -> lock))
            .clock(CLOCK)
            .build();

    ExecutorService pool = Executors.newFixedThreadPool(2);
    BindResult r;
    try {
      var result = binder.bindAsync(NS, "p1", p1.uid(), "n1", pool);
      assertThat(confirmationReading.await(10, TimeUnit.SECONDS))
          .as("the confirmation started on the pool")
          .isTrue();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while ((cleaner.get() == null || cleaner.get().getState() != Thread.State.WAITING)
          && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(cleaner.get()).as("the clean-up cleared the allocation").isNotNull();
      assertThat(cleaner.get().getState())
          .as("the clean-up waits for the confirmation")
          .isEqualTo(Thread.State.WAITING);
      assertThat(cleaner.get()).as("the confirmation runs beside").isNotSameAs(confirming.get());
      cleaner.get().interrupt(); // e.g. the executor's shutdownNow
      Thread.sleep(50);
      confirmationMayRead.countDown();
      r = result.get(10, TimeUnit.SECONDS);
    } finally {
      confirmationMayRead.countDown();
      pool.shutdownNow();
    }

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(annotations(cluster, "p1")).doesNotContainKey("hami.io/bind-phase");
    assertThat(r.cleanupProblems()).as("clean-up problems").isEmpty();
    assertThat(lockValue(cluster, "n1"))
        .as("node lock after the bind ended DOES_NOT_FIT (else held for its 5 min timeout)")
        .isNull();
    assertThat(r.locksHeld()).isFalse();
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
    assertThat(
            ExtenderFilter.builder(cluster, REGISTRY)
                .writeAnnotations(cluster)
                .build()
                .filter(p1, List.of("n1"))
                .node())
        .contains("n1");
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
    NodeLock lock =
        StoreNodeLock.create(
            store,
            LockSettings.builder()
                .key(LOCK_KEY)
                .lockTimeout(Duration.ofMinutes(5))
                .clock(CLOCK)
                .ownerLiveness(cluster.ownerLiveness())
                .build());
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
