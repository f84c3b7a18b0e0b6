package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.locks;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Breaker: a usage read under the lock that throws unchecked (a client's bug or an unparsable
 * answer it does not map, as the lock store's read in {@code ConfirmationCancelledOrFailingTest})
 * escapes the bind: no clean-up runs, so the node lock taken for the pod and the allocation written
 * first stay, and every other pod's bind on the node waits for the lock's timeout. The lock store's
 * unchecked error is already turned into FAILED and cleaned up; the usage reads must be too.
 */
class UncheckedUsageReadTest {
  final InMemoryCluster cluster = InMemoryCluster.create();
  final ExecutorService pool = Executors.newFixedThreadPool(4);

  @AfterEach
  void stop() throws InterruptedException {
    pool.shutdownNow();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  /** The cluster, its pod LISTs throwing unchecked (counted in {@code lists}). */
  static final class GarbledLists extends ForwardingCluster {
    final AtomicInteger lists = new AtomicInteger();

    GarbledLists(InMemoryCluster cluster) {
      super(cluster, cluster);
    }

    @Override
    public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
      lists.incrementAndGet();
      throw new IllegalStateException("garbled pod list of node " + node);
    }
  }

  /** The cluster, its pod PATCHes throwing unchecked after they applied (counted). */
  static final class GarbledPatches extends ForwardingCluster {
    final AtomicInteger patches = new AtomicInteger();

    GarbledPatches(InMemoryCluster cluster) {
      super(cluster, cluster);
    }

    @Override
    public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
        throws ClusterException {
      patches.incrementAndGet();
      super.patchPodMetadata(namespace, name, patch);
      throw new IllegalStateException("garbled answer to a PATCH of pod " + name);
    }
  }

  /**
   * Every pod PATCH throws unchecked (applied): the allocation write and then the clean-up's clear
   * patch. The clean-up must still release the node lock.
   */
  @Test
  void aCleanupWhoseClearPatchThrowsUncheckedStillReleasesTheLock() {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1");
    GarbledPatches writer = new GarbledPatches(cluster);

    BindResult r;
    try (LogCapture log = LogCapture.start()) {
      r =
          PodBinder.builder(writer, writer, REGISTRY, locks(cluster))
              .clock(Fixtures.CLOCK)
              .retryPolicy(Fixtures.RETRY)
              .build()
              .bind(NS, "p1", p1.uid(), "n1");
      assertThat(log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - .*cleanup was incomplete"))
          .hasSize(1);
    } catch (RuntimeException e) {
      assertThat(lockValue(cluster, "n1"))
          .as("the bind threw %s and left the node lock held", e)
          .isNull();
      throw e;
    }
    assertThat(writer.patches).as("the write and the clear were tried").hasValueGreaterThan(1);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(lockValue(cluster, "n1")).as("the node lock after the bind ended").isNull();
  }

  /** The cluster, its Binding POST throwing unchecked, applied or not. */
  static final class GarbledBinding extends ForwardingCluster {
    final boolean applied;

    GarbledBinding(InMemoryCluster cluster, boolean applied) {
      super(cluster, cluster);
      this.applied = applied;
    }

    @Override
    public BindingPostResult bind(
        String namespace, String name, String uid, String resourceVersion, String node) {
      if (applied) {
        super.bind(namespace, name, uid, resourceVersion, node);
      }
      throw new IllegalStateException("garbled answer to the Binding of pod " + name);
    }
  }

  private BindResult bindThrough(GarbledBinding g, PodView p1) {
    try {
      return PodBinder.builder(g, g, REGISTRY, locks(cluster))
          .clock(Fixtures.CLOCK)
          .retryPolicy(Fixtures.RETRY)
          .build()
          .bind(NS, "p1", p1.uid(), "n1");
    } catch (RuntimeException e) {
      throw new AssertionError(
          "the bind threw %s, the node lock left %s".formatted(e, lockValue(cluster, "n1")), e);
    }
  }

  /**
   * The Binding POST throws unchecked without applying: its outcome unknown to the bind, resolved
   * by re-reading the pod (unbound: FAILED, cleaned up, the lock released).
   */
  @Test
  void aBindingThatThrowsUncheckedUnappliedIsResolvedAndCleanedUp() {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();

    BindResult r = bindThrough(new GarbledBinding(cluster, false), p1);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(lockValue(cluster, "n1")).isNull();
  }

  /** The same, applied: re-read bound here, BOUND (the lock kept for the device plugin). */
  @Test
  void aBindingThatThrowsUncheckedAppliedIsResolvedBound() {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();

    BindResult r = bindThrough(new GarbledBinding(cluster, true), p1);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
  }

  private PodBinder binder(GarbledLists reader) {
    return PodBinder.builder(reader, reader, REGISTRY, locks(cluster))
        .clock(Fixtures.CLOCK)
        .retryPolicy(Fixtures.RETRY)
        .build();
  }

  private void assertCleanedUp(BindResult r, GarbledLists reader) {
    assertThat(reader.lists).as("the usage was listed").hasPositiveValue();
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(lockValue(cluster, "n1")).as("the node lock after the bind ended").isNull();
    assertThat(annotations(cluster, "p1"))
        .as("no bind phase left on the unbound pod")
        .doesNotContainKeys("hami.io/bind-phase", "hami.io/bind-time");
  }

  @Test
  void aFilteredPodsBindWhoseListThrowsUncheckedFailsCleanedUp() {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    Fixtures.filteredOnto(cluster, p1, "n1"); // written first, then listed
    GarbledLists reader = new GarbledLists(cluster);

    BindResult r;
    try {
      r = binder(reader).bind(NS, "p1", p1.uid(), "n1");
    } catch (RuntimeException e) {
      assertThat(lockValue(cluster, "n1"))
          .as("the bind threw %s and left the node lock held", e)
          .isNull();
      throw e;
    }
    assertCleanedUp(r, reader);
  }

  @Test
  void anAsyncBindWhoseListThrowsUncheckedFailsCleanedUp() throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 4000, 30)).view();
    GarbledLists reader = new GarbledLists(cluster);

    BindResult r;
    try {
      r = binder(reader).bindAsync(NS, "p1", p1.uid(), "n1", pool).get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      assertThat(lockValue(cluster, "n1"))
          .as("the bind failed with %s and left the node lock held", e.getCause())
          .isNull();
      throw e;
    }
    assertCleanedUp(r, reader);
  }
}
