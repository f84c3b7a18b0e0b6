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
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (breaker) of the confirmation begun beside the pod LISTs, the one end that neither posts
 * the Binding nor releases: the re-fit's second write meets the pod bound meanwhile by this flow's
 * allocation (another attempt of the same pod, kube-scheduler's retried bind), so {@code
 * RetriedBind.boundMeanwhile} answers BOUND and keeps the lock for the hand-off to come, without
 * waiting for the confirmation still running. The device plugin then serves the pod and releases
 * the lock, and the late confirmation reads it afterwards: a WARN "no longer held ... not binding
 * on a lost lock" for a pod this bind answered BOUND (and, for a lock over half its timeout old, a
 * re-stamp compare-and-set after the answer; it fails on the released value, so no lock is leaked).
 */
class ConfirmationBoundMeanwhileTest {

  final InMemoryCluster cluster = InMemoryCluster.create();
  final CountDownLatch confirmationMayRead = new CountDownLatch(1);
  final CountDownLatch confirmationReading = new CountDownLatch(1);

  /** The cluster's lock store; its first read (the confirmation's) held until told. */
  final LockStore store =
      new ForwardingLockStore(cluster.lockStore()) {
        private final AtomicBoolean first = new AtomicBoolean(true);

        @Override
        public Optional<String> read(String node, String key) throws LockBackendException {
          if (first.compareAndSet(true, false)) {
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

  @Test
  void aBindAnsweredBoundMeanwhileHasAwaitedItsConfirmation() throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    String filtered = annotations(cluster, "p1").get(ALLOCATED);
    Fixtures.addServedPodOn(cluster, filtered.substring(0, filtered.indexOf(',')), 10000);

    AtomicInteger patches = new AtomicInteger();
    ClusterWriter writer =
        new ClusterWriter() {
          @Override
          public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
              throws ClusterException {
            if (patches.incrementAndGet() == 2) { // the re-fit's write: another attempt bound it
              String rv = cluster.readPod(NS, "p1").orElseThrow().resourceVersion();
              assertThat(cluster.bind(NS, "p1", p1.uid(), rv, "n1").kind())
                  .isEqualTo(BindingPostResult.Kind.BOUND);
            }
            return cluster.patchPodMetadata(namespace, name, patch);
          }

          @Override
          public BindingPostResult bind(
              String namespace, String name, String uid, String rv, String node) {
            return cluster.bind(namespace, name, uid, rv, node);
          }
        };
    NodeLock lock = Fixtures.lockOver(store, cluster, CLOCK, LOCK_KEY);
    PodBinder binder =
        PodBinder.builder(cluster, writer, REGISTRY, NodeLockProvider.cached(k -> lock))
            .clock(CLOCK)
            .build();

    ExecutorService pool = Executors.newCachedThreadPool(); // each step on a thread at once
    BindResult r;
    boolean answeredWhileConfirming;
    try (LogCapture log = LogCapture.start()) {
      CompletableFuture<BindResult> result = binder.bindAsync(NS, "p1", p1.uid(), "n1", pool);
      assertThat(confirmationReading.await(10, TimeUnit.SECONDS)).isTrue();
      try {
        result.get(1, TimeUnit.SECONDS);
        answeredWhileConfirming = true;
        // the device plugin serves the pod answered BOUND and releases its lock
        assertThat(Fixtures.handoff(cluster).allocateAll("n1").status())
            .isEqualTo(HandoffResult.Status.COMPLETED);
      } catch (TimeoutException e) {
        answeredWhileConfirming = false;
      }
      confirmationMayRead.countDown();
      r = result.get(10, TimeUnit.SECONDS);
      if (!answeredWhileConfirming) {
        assertThat(Fixtures.handoff(cluster).allocateAll("n1").status())
            .isEqualTo(HandoffResult.Status.COMPLETED);
      }
      pool.shutdown(); // the confirmation ran on the pool: once it is idle, a late one has logged
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).as("the pool idle").isTrue();
      assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
      assertThat(log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - node lock .* no longer held"))
          .as("a 'lost lock, not binding' warning for the pod this bind answered BOUND")
          .isEmpty();
    } finally {
      confirmationMayRead.countDown();
      pool.shutdownNow();
    }
    assertThat(answeredWhileConfirming)
        .as("BOUND answered while its confirmation was still running")
        .isFalse();
    assertThat(lockValue(cluster, "n1")).as("released by the hand-off, not leaked").isNull();
  }
}
