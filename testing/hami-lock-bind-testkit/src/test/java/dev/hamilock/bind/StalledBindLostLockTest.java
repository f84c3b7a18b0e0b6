package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A bind stalled past the lock timeout between writing its allocation and POSTing the Binding. Its
 * pod is not bound yet, so the HAMi#3096 guard (which keeps an expired lock whose holder is bound
 * and allocating) does not protect it: another scheduler takes the expired lock over and may
 * allocate the same GPU. Before, the stalled binder then POSTed its Binding on the lost lock — two
 * pods on one GPU allocation, the device plugin serving the lock's holder. Now it confirms the lock
 * right before the Binding ({@code NodeLock.stillHeld}) and gives up instead.
 */
class StalledBindLostLockTest {

  /** A clock both binders' locks and the stalled binder share; moves only when told. */
  static final class StepClock implements InstantSource {
    private volatile Instant now = Instant.parse("2026-06-14T15:00:00Z");

    @Override
    public Instant instant() {
      return now;
    }

    void advance(Duration d) {
      now = now.plus(d);
    }
  }

  final InMemoryCluster cluster = InMemoryCluster.create();
  final StepClock clock = new StepClock();

  NodeLock lockOfAProcess() {
    return Fixtures.lockOver(cluster.lockStore(), cluster, clock, LOCK_KEY);
  }

  /** Writes through to the cluster; after pod p1's allocation patch, runs {@code stall} (once). */
  ClusterWriter stallingAfterTheAllocation(Runnable stall, List<String> bindings) {
    AtomicInteger patches = new AtomicInteger();
    return new ClusterWriter() {
      @Override
      public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
          throws ClusterException {
        ClusterPod p = cluster.patchPodMetadata(namespace, name, patch);
        if (patches.incrementAndGet() == 1) {
          stall.run();
        }
        return p;
      }

      @Override
      public BindingPostResult bind(
          String namespace, String name, String uid, String rv, String node) {
        bindings.add(name + "->" + node);
        return cluster.bind(namespace, name, uid, rv, node);
      }
    };
  }

  PodBinder binder(ClusterWriter writer) {
    NodeLock mine = lockOfAProcess();
    return PodBinder.builder(cluster, writer, Fixtures.REGISTRY, NodeLockProvider.cached(k -> mine))
        .clock(clock)
        .build();
  }

  @Test
  void aBindStalledPastTheLockTimeoutDoesNotPostItsBindingOnTheTakenOverLock() {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("p1", 1, 12000, 30));
    cluster.addPod(pod("p2", 1, 12000, 30));
    NodeLock otherScheduler = lockOfAProcess();
    LockOwner p2 = LockOwner.of(NS, "p2");
    List<AcquireOutcome> takeover = new ArrayList<>();
    List<String> bindings = new ArrayList<>();
    Runnable stall =
        () -> {
          // the other scheduler sees p1's lock, p1's binder stalls 5m1s, the other takes the lock
          // over
          assertThat(catchThrowable(() -> otherScheduler.acquire("n1", p2)))
              .isInstanceOf(LockContentionException.class);
          clock.advance(Duration.ofMinutes(5).plusSeconds(1));
          try {
            takeover.add(otherScheduler.acquire("n1", p2));
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        };

    BindResult r;
    try (LogCapture log = LogCapture.start()) {
      r = binder(stallingAfterTheAllocation(stall, bindings)).bind(NS, "p1", "", "n1");
      assertThat(log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - node lock .* no longer held"))
          .hasSize(1);
    }

    assertThat(takeover)
        .containsExactly(AcquireOutcome.TOOK_OVER_EXPIRED); // p1 unbound: not protected
    assertThat(r.outcome()).isEqualTo(BindOutcome.CONTENDED);
    assertThat(r.reason())
        .contains("no longer held by pod default/p1")
        .contains("lock timeout 5m0s");
    assertThat(bindings).as("no Binding POSTed on the lost lock").isEmpty();
    assertThat(
            cluster.pods().stream()
                .filter(p -> p.view().name().equals("p1"))
                .findFirst()
                .orElseThrow()
                .nodeName())
        .isEmpty();
    assertThat(annotations(cluster, "p1"))
        .doesNotContainKey(ALLOCATED); // its allocation is void: cleared
    assertThat(lockValue(cluster, "n1"))
        .isEqualTo("2026-06-14T15:05:01Z,default,p2"); // the new holder's, untouched
    assertThat(r.locksHeld()).isFalse();
  }

  /**
   * {@code bindAsync} confirms its lock beside the pod LISTs that follow its first write; stalled
   * past the lock timeout after that confirmation (in a LIST), it confirms again before the
   * Binding. Without the second confirmation the Binding is POSTed on the taken-over lock and the
   * test fails.
   */
  @Test
  void aBindAsyncStalledPastTheLockTimeoutAfterItsConfirmationConfirmsAgain() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 12000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    cluster.addPod(pod("p2", 1, 12000, 30));
    NodeLock otherScheduler = lockOfAProcess();
    LockOwner p2 = LockOwner.of(NS, "p2");
    CountDownLatch confirmed = new CountDownLatch(1);
    AtomicInteger confirmations = new AtomicInteger();
    LockStore store = cluster.lockStore();
    LockStore counting =
        new ForwardingLockStore(store) { // p1's lock reads its store only to confirm it
          @Override
          public Optional<String> read(String node, String key) throws LockBackendException {
            Optional<String> v = super.read(node, key);
            confirmations.incrementAndGet();
            confirmed.countDown();
            return v;
          }
        };
    NodeLock mine = Fixtures.lockOver(counting, cluster, clock, LOCK_KEY);
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
              clock.advance(Duration.ofMinutes(5).plusSeconds(1));
              takeover.add(otherScheduler.acquire("n1", p2));
            } catch (Exception e) {
              throw new AssertionError(e);
            }
          }
        };
    List<String> bindings = new ArrayList<>();
    ExecutorService steps = Executors.newFixedThreadPool(8);
    BindResult r;
    try (LogCapture log = LogCapture.start()) {
      r =
          PodBinder.builder(
                  stallingList,
                  stallingAfterTheAllocation(() -> {}, bindings),
                  Fixtures.REGISTRY,
                  NodeLockProvider.cached(k -> mine))
              .clock(clock)
              .build()
              .bindAsync(NS, "p1", "", "n1", steps)
              .get(30, TimeUnit.SECONDS);
      assertThat(log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - node lock .* no longer held"))
          .hasSize(1);
    } finally {
      steps.shutdownNow();
    }

    assertThat(stalled).isTrue();
    assertThat(takeover).containsExactly(AcquireOutcome.TOOK_OVER_EXPIRED);
    assertThat(confirmations).as("beside the LISTs, then again before the Binding").hasValue(2);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.CONTENDED);
    assertThat(bindings).as("no Binding POSTed on the lost lock").isEmpty();
    assertThat(annotations(cluster, "p1")).doesNotContainKey(ALLOCATED);
    assertThat(lockValue(cluster, "n1")).isEqualTo("2026-06-14T15:05:01Z,default,p2");
  }

  @Test
  void aBindStalledUnderTheTimeoutBindsAndPastHalfOfItReStampsItsLockFirst() {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("p1", 1, 12000, 30));
    List<String> bindings = new ArrayList<>();
    BindResult r =
        binder(stallingAfterTheAllocation(() -> clock.advance(Duration.ofMinutes(3)), bindings))
            .bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(bindings).containsExactly("p1->n1");
    // stamped 15:00:00 at acquisition, 3 min old at the check (> half of 5 min): renewed before the
    // Binding
    assertThat(lockValue(cluster, "n1")).isEqualTo("2026-06-14T15:03:00Z,default,p1");
  }

  @Test
  void aQuickBindConfirmsItsLockWithOneReadAndBinds() {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("p1", 1, 12000, 30));
    List<String> bindings = new ArrayList<>();
    long readsBefore = cluster.operationCount(InMemoryCluster.Operation.LOCK_READ);
    long writesBefore = cluster.operationCount(InMemoryCluster.Operation.LOCK_WRITE);
    BindResult r = binder(stallingAfterTheAllocation(() -> {}, bindings)).bind(NS, "p1", "", "n1");

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(bindings).containsExactly("p1->n1");
    assertThat(lockValue(cluster, "n1")).isEqualTo("2026-06-14T15:00:00Z,default,p1");
    // the lock was written under half a timeout ago: one read of the stored value confirms it
    // (issue 23: before, no request — a lock removed by another writer went unnoticed)
    assertThat(cluster.operationCount(InMemoryCluster.Operation.LOCK_READ) - readsBefore)
        .isEqualTo(1);
    assertThat(cluster.operationCount(InMemoryCluster.Operation.LOCK_WRITE) - writesBefore)
        .isEqualTo(1); // the acquire
  }
}
