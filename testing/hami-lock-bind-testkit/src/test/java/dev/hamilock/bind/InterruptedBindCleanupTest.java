package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.CLOCK;
import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A bind whose thread is interrupted while it holds the node lock (the extender's HTTP server
 * interrupts a request past its deadline; the whole stack's reads then stop with kind {@code
 * INTERRUPTED}, as {@code KubernetesHamiStack} documents) must still clean up: clear its allocation
 * annotations and release the lock. The Kubernetes ports refuse every request of an interrupted
 * thread (the lock store's writes answer {@code INTERRUPTED} without sending), so a cleanup run
 * with the flag set left the node locked for a whole lock timeout (5 min) for every other pod.
 * Found by review (breaker2); the first test failed before {@code PodBinder} cleared the flag for
 * its cleanup (lock still {@code default/p1}, annotations still written).
 */
class InterruptedBindCleanupTest {

  final InMemoryCluster cluster = InMemoryCluster.create();

  /**
   * The cluster's lock store, refusing an interrupted thread's requests as the Kubernetes store
   * does.
   */
  final LockStore interruptible = ForwardingLockStore.refusingInterrupted(cluster.lockStore());

  /**
   * Pod writes refused on an interrupted thread too (an OkHttp call of an interrupted thread
   * fails).
   */
  final ClusterWriter writer =
      new ClusterWriter() {
        @Override
        public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
            throws ClusterException {
          if (Thread.currentThread().isInterrupted()) {
            throw new ClusterException(
                ClusterException.Kind.INTERRUPTED, "patch of an interrupted thread", null);
          }
          return cluster.patchPodMetadata(namespace, name, patch);
        }

        @Override
        public BindingPostResult bind(
            String namespace, String name, String uid, String rv, String node) {
          return cluster.bind(namespace, name, uid, rv, node);
        }
      };

  /**
   * Reads as the stack's ports: the interrupt lands at {@code interruptAt}'s read, which is then
   * refused.
   */
  ClusterReader reader(AtomicReference<String> interruptAt) {
    return new ClusterReader() {
      private void admit(String what) throws ClusterException {
        if (what.equals(interruptAt.get())) {
          interruptAt.set(null);
          Thread.currentThread().interrupt(); // the HTTP server's deadline passes now
        }
        if (Thread.currentThread().isInterrupted()) {
          throw new ClusterException(
              ClusterException.Kind.INTERRUPTED, "interrupted before " + what, null);
        }
      }

      @Override
      public Optional<NodeView> readNode(String name) throws ClusterException {
        admit("readNode");
        return cluster.readNode(name);
      }

      @Override
      public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
        admit("readPod");
        return cluster.readPod(namespace, name);
      }

      @Override
      public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
        admit("listPodsAssignedTo");
        return cluster.listPodsAssignedTo(node);
      }

      @Override
      public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
        admit("listPodsOnNode");
        return cluster.listPodsOnNode(node);
      }

      @Override
      public DraObjects readDra(Collection<String> nodes) throws ClusterException {
        admit("readDra");
        return cluster.readDra(nodes);
      }
    };
  }

  /** The node lock over {@link #interruptible} (5 min timeout, liveness from {@code c}). */
  NodeLock interruptibleLock(InMemoryCluster c) {
    return Fixtures.lockOver(interruptible, c, CLOCK, LOCK_KEY);
  }

  PodBinder binder(AtomicReference<String> interruptAt) {
    NodeLock lock = interruptibleLock(cluster);
    return PodBinder.builder(
            reader(interruptAt), writer, Fixtures.REGISTRY, NodeLockProvider.cached(k -> lock))
        .clock(CLOCK)
        .build();
  }

  @Test
  void aBindInterruptedUnderTheLockStillReleasesItAndKeepsTheFlag() {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("p1", 1, 12000, 30));
    AtomicBoolean flagAfter = new AtomicBoolean();

    BindResult r =
        runOnFreshThread(
            () -> binder(new AtomicReference<>("readNode")).bind(NS, "p1", "", "n1"), flagAfter);

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.failure().orElseThrow().kind()).isEqualTo(FlowFailure.Kind.INTERRUPTED);
    assertThat(lockValue(cluster, "n1")).as("node lock after the interrupted bind").isNull();
    assertThat(r.locksHeld()).isFalse();
    assertThat(r.cleanupProblems()).isEmpty();
    assertThat(flagAfter).as("the caller's interrupt flag is kept").isTrue();
  }

  @Test
  void aBindInterruptedAfterItsAllocationWasWrittenClearsItAndReleasesTheLock() {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("p1", 1, 12000, 30));
    AtomicBoolean flagAfter = new AtomicBoolean();
    AtomicBoolean bindingPosted = new AtomicBoolean();
    // the interrupt lands while the allocation is written: its answer is lost, the Binding is not
    // sent
    ClusterWriter interruptingWriter =
        new ClusterWriter() {
          private boolean first = true;

          @Override
          public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
              throws ClusterException {
            if (first) {
              first = false;
              cluster.patchPodMetadata(namespace, name, patch); // applied
              Thread.currentThread().interrupt();
              throw new ClusterException(
                  ClusterException.Kind.UNAVAILABLE, "answer lost: interrupted", null);
            }
            return writer.patchPodMetadata(namespace, name, patch);
          }

          @Override
          public BindingPostResult bind(
              String namespace, String name, String uid, String rv, String node) {
            bindingPosted.set(true);
            return cluster.bind(namespace, name, uid, rv, node);
          }
        };
    NodeLock lock = interruptibleLock(cluster);
    PodBinder binder =
        PodBinder.builder(
                reader(new AtomicReference<>()),
                interruptingWriter,
                Fixtures.REGISTRY,
                NodeLockProvider.cached(k -> lock))
            .clock(CLOCK)
            .build();

    BindResult r = runOnFreshThread(() -> binder.bind(NS, "p1", "", "n1"), flagAfter);

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(bindingPosted).isFalse();
    assertThat(annotations(cluster, "p1")).as("allocation cleared").doesNotContainKey(ALLOCATED);
    assertThat(lockValue(cluster, "n1")).as("node lock after the interrupted bind").isNull();
    assertThat(r.cleanupProblems()).isEmpty();
    assertThat(flagAfter).as("the caller's interrupt flag is kept").isTrue();
  }

  /**
   * A Binding POST cut short by an interrupt is ambiguous (HAMi#2645): the pod must still be
   * re-read to decide it. Before the re-reads ran with the flag cleared, every re-read was refused
   * on the interrupted thread and the bind ended UNKNOWN with the lock held for a lock timeout.
   */
  @Test
  void anAmbiguousBindingOnAnInterruptedThreadIsStillDecidedByReReadingThePod() {
    for (boolean applied : new boolean[] {true, false}) {
      InMemoryCluster c = cluster;
      String pod = applied ? "applied" : "lost";
      c.addNode(node("n-" + pod, 1, 15360));
      c.addPod(pod(pod, 1, 12000, 30));
      AtomicBoolean flagAfter = new AtomicBoolean();
      ClusterWriter interruptedBinding =
          new ClusterWriter() {
            @Override
            public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
                throws ClusterException {
              return writer.patchPodMetadata(namespace, name, patch);
            }

            @Override
            public BindingPostResult bind(
                String namespace, String name, String uid, String rv, String node) {
              if (applied) {
                c.bind(namespace, name, uid, rv, node);
              }
              Thread.currentThread().interrupt(); // the deadline passes while the POST is in flight
              return BindingPostResult.ambiguous("answer lost: interrupted");
            }
          };
      NodeLock lock = interruptibleLock(c);
      PodBinder binder =
          PodBinder.builder(
                  reader(new AtomicReference<>()),
                  interruptedBinding,
                  Fixtures.REGISTRY,
                  NodeLockProvider.cached(k -> lock))
              .clock(CLOCK)
              .build();

      BindResult r = runOnFreshThread(() -> binder.bind(NS, pod, "", "n-" + pod), flagAfter);

      assertThat(r.outcome())
          .as("a binding that was %s", applied ? "applied" : "not applied")
          .isEqualTo(applied ? BindOutcome.BOUND : BindOutcome.FAILED);
      if (!applied) {
        assertThat(lockValue(c, "n-" + pod)).as("node lock after the lost binding").isNull();
        assertThat(annotations(c, pod)).as("allocation cleared").doesNotContainKey(ALLOCATED);
        assertThat(r.locksHeld()).isFalse();
      }
      assertThat(flagAfter).as("the caller's interrupt flag is kept").isTrue();
    }
  }

  /**
   * The device plugin's hand-off: an interrupt landing while the served pod is marked (kubelet's
   * Allocate deadline) must not keep the served pod's lock for a lock timeout. Failed before {@code
   * DevicePluginHandoff} released with the flag cleared (lock still {@code default/p1}).
   */
  @Test
  void aHandoffInterruptedWhileMarkingThePodStillReleasesItsLock() {
    cluster.addNode(node("n1", 1, 15360));
    String uid = cluster.addPod(pod("p1", 1, 1000, 30)).view().uid();
    NodeLock lock = interruptibleLock(cluster);
    assertThat(
            PodBinder.builder(
                    cluster, cluster, Fixtures.REGISTRY, NodeLockProvider.cached(k -> lock))
                .clock(CLOCK)
                .build()
                .bind(NS, "p1", uid, "n1")
                .outcome())
        .isEqualTo(BindOutcome.BOUND);
    ClusterWriter interruptedWhileMarking =
        new ClusterWriter() {
          @Override
          public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
              throws ClusterException {
            ClusterPod p = writer.patchPodMetadata(namespace, name, patch);
            Thread.currentThread().interrupt(); // applied and answered; the deadline passes now
            return p;
          }

          @Override
          public BindingPostResult bind(
              String namespace, String name, String podUid, String rv, String node) {
            throw new AssertionError("the hand-off posts no Binding");
          }
        };
    DevicePluginHandoff handoff =
        DevicePluginHandoff.create(
            cluster,
            interruptedWhileMarking,
            Fixtures.REGISTRY.vendor("NVIDIA").orElseThrow(),
            lock);
    AtomicReference<HandoffResult> out = new AtomicReference<>();
    AtomicBoolean flagAfter = new AtomicBoolean();
    Thread t =
        new Thread(
            () -> {
              out.set(handoff.allocateAll("n1"));
              flagAfter.set(Thread.currentThread().isInterrupted());
            });
    t.start();
    try {
      t.join(60_000);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }

    assertThat(out.get().status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(lockValue(cluster, "n1")).as("the served pod's lock").isNull();
    assertThat(out.get().lockReleased()).isTrue();
    assertThat(flagAfter).as("the caller's interrupt flag is kept").isTrue();
  }

  private static BindResult runOnFreshThread(
      java.util.function.Supplier<BindResult> bind, AtomicBoolean flagAfter) {
    AtomicReference<BindResult> out = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              out.set(bind.get());
              flagAfter.set(Thread.currentThread().isInterrupted());
            });
    t.start();
    try {
      t.join(60_000);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    assertThat(out.get()).as("bind returned").isNotNull();
    return out.get();
  }
}
