package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NOW;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.handoff;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testing.logs.LogCapture;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, the mutual swap after a late lock removal: pod a's binder writes its allocation,
 * confirms its lock, and the lock is removed right before a's Binding (an operator, HAMi's
 * scheduler on a skewed clock). Pod b's binder takes the free lock. Before the hand-off guard b
 * wrote and bound too; HAMi's device plugin then served a through the lock (b's allocation) and b
 * through its fallback list (a's): each pod the other's cards, both bind phases {@code success}.
 * Now b sees a in flight under the lock and ends CONTENDED.
 */
class Issue23MutualSwapTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  /** The cluster as a's binder writes to it: the lock is removed right before a's Binding. */
  final ForwardingCluster removingBeforeBinding =
      new ForwardingCluster(null, cluster) {
        @Override
        public BindingPostResult bind(
            String namespace, String name, String uid, String rv, String node) {
          try {
            String held = cluster.lockStore().read(node, LOCK_KEY).orElseThrow();
            assertThat(cluster.lockStore().deleteIfEquals(node, LOCK_KEY, held)).isTrue();
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
          return super.bind(namespace, name, uid, rv, node);
        }
      };

  @Test
  void issue23LockRemovedAfterTheConfirmationDoesNotLetTheDevicePluginSwapTwoAllocations() {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("a", 1, 5000, 30));
    cluster.addPod(pod("b", 1, 6000, 40));
    BindResult a =
        PodBinder.builder(
                cluster, removingBeforeBinding, Fixtures.REGISTRY, Fixtures.locks(cluster))
            .clock(Fixtures.CLOCK)
            .build()
            .bind(NS, "a", "", "n1");
    assertThat(a.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(lockValue(cluster, "n1")).as("removed by the other writer").isNull();

    BindResult b = binder(cluster).build().bind(NS, "b", "", "n1");

    assertThat(b.outcome()).as("%s", b).isEqualTo(BindOutcome.CONTENDED);
    assertThat(b.failure().orElseThrow().contention()).isTrue();
    assertThat(b.reason()).contains("pod default/a is still waiting for the device plugin");
    assertThat(cluster.pods().stream().filter(p -> p.view().name().equals("b")))
        .singleElement()
        .satisfies(p -> assertThat(p.isBound()).isFalse());
    assertThat(annotations(cluster, "b")).doesNotContainKeys(TO_ALLOCATE, "hami.io/bind-phase");
    assertThat(lockValue(cluster, "n1")).as("b released its lock").isNull();

    HandoffResult served = handoff(cluster).allocateAll("n1");
    assertThat(served.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(served.pod().orElseThrow().name()).isEqualTo("a");
    assertThat(served.handedOut().get(0).devices().get(0).usedmem()).isEqualTo(5000);

    // a served (bind phase success): b's retry binds, and the plugin serves b its own cards
    assertThat(binder(cluster).build().bind(NS, "b", "", "n1").outcome())
        .isEqualTo(BindOutcome.BOUND);
    HandoffResult second = handoff(cluster).allocateAll("n1");
    assertThat(second.pod().orElseThrow().name()).isEqualTo("b");
    assertThat(second.handedOut().get(0).devices().get(0).usedmem()).isEqualTo(6000);
  }

  /** Another pod assigned to n1, bind phase {@code phase}, bind time {@code time}. */
  void other(PodView.Phase phase, String bindPhase, String time, Optional<String> boundTo) {
    cluster.addPod(
        pod("other", 1, 1000, 10).toBuilder()
            .phase(phase)
            .annotations(
                Map.of(
                    HamiAnnotations.VGPU_NODE, "n1",
                    HamiAnnotations.BIND_PHASE, bindPhase,
                    HamiAnnotations.BIND_TIME, time))
            .build(),
        boundTo);
  }

  BindOutcome bindNext() {
    cluster.addNode(node("n1", 1, 15360));
    cluster.addPod(pod("p", 1, 1000, 10));
    return binder(cluster).build().bind(NS, "p", "", "n1").outcome();
  }

  static String secondsAgo(long s) {
    return Long.toString(NOW.getEpochSecond() - s);
  }

  @Test
  void aPodLeftAllocatingBlocksTheNodeForLessThanOneLockTimeout() {
    other(PodView.Phase.PENDING, "allocating", secondsAgo(299), Optional.empty());
    assertThat(bindNext()).isEqualTo(BindOutcome.CONTENDED);
  }

  @Test
  void aBindTimeOneLockTimeoutOldDoesNotBlock() {
    other(PodView.Phase.PENDING, "allocating", secondsAgo(300), Optional.of("n1"));
    assertThat(bindNext()).isEqualTo(BindOutcome.BOUND);
  }

  @Test
  void aBindTimeOneLockTimeoutInTheFutureDoesNotBlock() {
    other(PodView.Phase.PENDING, "allocating", secondsAgo(-300), Optional.of("n1"));
    assertThat(bindNext()).isEqualTo(BindOutcome.BOUND);
  }

  @Test
  void aRunningPodDoesNotBlock() {
    other(PodView.Phase.RUNNING, "allocating", secondsAgo(1), Optional.of("n1"));
    assertThat(bindNext()).isEqualTo(BindOutcome.BOUND);
  }

  /**
   * A deleted pod bound to the node stays listed while it terminates (kube-apiserver keeps a bound
   * pod until kubelet confirms); it gets no Allocate and its lock may be taken over (a TERMINATING
   * holder), so it does not block either — found on the real kube-apiserver by the doctor's
   * re-acquired-lock test, which the emulator (deleting at once) could not show.
   */
  @Test
  void aPodBeingDeletedDoesNotBlock() {
    cluster.addPod(
        pod("other", 1, 1000, 10).toBuilder()
            .deleting(true)
            .annotations(
                Map.of(
                    HamiAnnotations.VGPU_NODE, "n1",
                    HamiAnnotations.BIND_PHASE, "allocating",
                    HamiAnnotations.BIND_TIME, secondsAgo(1)))
            .build(),
        Optional.of("n1"));
    assertThat(bindNext()).isEqualTo(BindOutcome.BOUND);
  }

  @Test
  void aServedPodDoesNotBlock() {
    other(PodView.Phase.PENDING, "success", secondsAgo(1), Optional.of("n1"));
    assertThat(bindNext()).isEqualTo(BindOutcome.BOUND);
  }

  @Test
  void aPodBoundToAnotherNodeDoesNotBlock() {
    other(PodView.Phase.PENDING, "allocating", secondsAgo(1), Optional.of("n2"));
    try (LogCapture log = LogCapture.start()) {
      assertThat(bindNext()).isEqualTo(BindOutcome.BOUND);
      assertThat(log.expect("WARN .* pod default/other is bound to node n2 but")).isNotEmpty();
    }
  }

  @Test
  void anUnparsableBindTimeDoesNotBlockAndIsWarnedAboutOnceNamingTheValue() {
    other(PodView.Phase.PENDING, "allocating", "yesterday", Optional.of("n1"));
    try (LogCapture log = LogCapture.start()) {
      PodBinder binder = binder(cluster).build();
      cluster.addNode(node("n1", 1, 15360));
      cluster.addPod(pod("p", 1, 1000, 10));
      cluster.addPod(pod("q", 1, 1000, 10));

      assertThat(binder.bind(NS, "p", "", "n1").outcome()).isEqualTo(BindOutcome.BOUND);
      handoff(cluster).allocateAll("n1"); // p served: its lock released
      assertThat(binder.bind(NS, "q", "", "n1").outcome()).isEqualTo(BindOutcome.BOUND);

      assertThat(
              log.expect(
                  "WARN dev\\.hamilock\\.bind\\.PodBinder - pod default/other on node n1:"
                      + " unparsable hami\\.io/bind-time \"yesterday\""))
          .hasSize(1);
    }
  }
}
