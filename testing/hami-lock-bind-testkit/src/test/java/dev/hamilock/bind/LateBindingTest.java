package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.CLOCK;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.handoff;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.locks;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Fault;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.core.LockOwner;
import dev.hamilock.testing.logs.LogCapture;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

/**
 * A Binding POST whose answer the client lost while kube-apiserver still holds it (timeout,
 * connection reset) and applies it later: the flow must never release a pod's lock and allocation
 * while that POST can still bind it (the reviewer's late-binding fault: the pod would end bound
 * with no allocation, and the next pod would be served its slices). The Binding names the pod's
 * resourceVersion; a pod read unbound at that version is moved past it before the locks go.
 */
class LateBindingTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  /** The Binding POSTs held "in flight": not applied, answered as timed out; applied on demand. */
  final AtomicReference<Supplier<BindingPostResult>> inFlight = new AtomicReference<>();

  final ForwardingCluster ports =
      new ForwardingCluster(cluster, cluster) {
        @Override
        public BindingPostResult bind(
            String namespace, String name, String uid, String resourceVersion, String node) {
          if (name.equals("p") && inFlight.get() == null) {
            inFlight.set(() -> cluster.bind(namespace, name, uid, resourceVersion, node));
            return BindingPostResult.ambiguous("injected: binding timed out (still in flight)");
          }
          return super.bind(namespace, name, uid, resourceVersion, node);
        }
      };

  LateBindingTest() {
    cluster.addNode(node("n1", 1, 15000));
    cluster.addPod(pod("p", 1, 10000, 0));
    cluster.addPod(pod("q", 1, 10000, 0));
  }

  PodBinder binder() {
    return PodBinder.builder(ports, ports, REGISTRY, locks(cluster)).clock(CLOCK).build();
  }

  List<String> boundTo(String node) {
    return cluster.pods().stream()
        .filter(p -> p.nodeName().filter(node::equals).isPresent())
        .map(p -> p.view().name())
        .toList();
  }

  @Test
  void aTimedOutBindingThatTheServerAppliesAfterTheRereadNeverBindsItsPod() {
    PodBinder b = binder();
    BindResult p = b.bind(NS, "p", "", "n1");

    assertThat(p.outcome()).as(p.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(p.locksHeld()).isFalse();
    assertThat(lockValue(cluster, "n1")).isNull();
    // kube-apiserver goes on with the POST the client gave up on: its precondition no longer holds
    BindingPostResult late = inFlight.get().get();
    assertThat(late.kind()).as(late.detail()).isEqualTo(BindingPostResult.Kind.CONFLICT);
    assertThat(late.detail()).contains("ResourceVersion in precondition");
    assertThat(boundTo("n1")).isEmpty();

    BindResult q = b.bind(NS, "q", "", "n1");
    assertThat(q.outcome()).as(q.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(boundTo("n1")).as("one 10000 MiB pod on the 15000 MiB card").containsExactly("q");
    HandoffResult h = handoff(cluster).allocate("n1", List.of(1));
    assertThat(h.status()).as(h.toString()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(h.pod()).map(LockOwner::name).contains("q");
  }

  @Test
  void aBindingAppliedBetweenTheRereadAndTheCleanupIsFoundBoundAndKeepsItsLock() {
    cluster.faults(
        (op, target) -> {
          Supplier<BindingPostResult> held = inFlight.get();
          if (op == Operation.PATCH_POD && target.equals(NS + "/p") && held != null) {
            // the server applies the held POST right before the clean-up's clear patch
            inFlight.set(() -> BindingPostResult.rejected("applied already"));
            assertThat(held.get().kind()).isEqualTo(BindingPostResult.Kind.BOUND);
          }
          return Fault.NONE;
        });

    BindResult p = binder().bind(NS, "p", "", "n1");

    assertThat(p.outcome()).as(p.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(p.locksHeld()).isTrue();
    assertThat(lockValue(cluster, "n1")).endsWith("," + NS + ",p");
    assertThat(annotations(cluster, "p")).containsEntry("hami.io/bind-phase", "allocating");
    assertThat(boundTo("n1")).containsExactly("p");
    BindResult q = binder().bind(NS, "q", "", "n1");
    assertThat(q.outcome()).as(q.reason()).isNotEqualTo(BindOutcome.BOUND);
  }

  @Test
  void aCleanupWhoseAnswerIsLostIsCheckedByReadingThePodAgain() {
    AtomicBoolean once = new AtomicBoolean(true);
    cluster.faults(
        (op, target) ->
            op == Operation.PATCH_POD
                    && target.equals(NS + "/p")
                    && inFlight.get() != null
                    && once.getAndSet(false)
                ? Fault.FAIL_AFTER
                : Fault.NONE);

    BindResult p = binder().bind(NS, "p", "", "n1");

    assertThat(p.outcome()).as(p.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p")).doesNotContainKey("hami.io/bind-phase");
    assertThat(inFlight.get().get().kind()).isEqualTo(BindingPostResult.Kind.CONFLICT);
    assertThat(boundTo("n1")).isEmpty();
  }

  @Test
  void aPodNeverMovedPastTheBindingsVersionIsUnknownAndKeepsItsLockAndAllocation() {
    cluster.faults(
        (op, target) ->
            op == Operation.PATCH_POD && target.equals(NS + "/p") && inFlight.get() != null
                ? Fault.FAIL_BEFORE
                : Fault.NONE);

    BindResult p;
    try (LogCapture log = LogCapture.start()) {
      p = binder().bind(NS, "p", "", "n1");
      assertThat(log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - binding pod default/p .*"))
          .singleElement(as(InstanceOfAssertFactories.STRING))
          .contains("moved past the Binding's resourceVersion", "leaving its locks");
    }

    assertThat(p.outcome()).as(p.reason()).isEqualTo(BindOutcome.UNKNOWN);
    assertThat(p.locksHeld()).isTrue();
    assertThat(lockValue(cluster, "n1")).endsWith("," + NS + ",p");
    assertThat(annotations(cluster, "p")).containsEntry("hami.io/bind-phase", "allocating");
    // and the POST landing now is served as any bound pod: the in-flight guard still sees it
    assertThat(inFlight.get().get().kind()).isEqualTo(BindingPostResult.Kind.BOUND);
    assertThat(binder().bind(NS, "q", "", "n1").outcome()).isNotEqualTo(BindOutcome.BOUND);
  }

  @Test
  void aPodWrittenBetweenItsAllocationAndItsBindingFailsPlainlyAndIsCleanedUp() {
    ForwardingCluster writtenMeanwhile =
        new ForwardingCluster(cluster, cluster) {
          @Override
          public BindingPostResult bind(
              String namespace, String name, String uid, String resourceVersion, String node) {
            try {
              cluster.patchPodMetadata(
                  namespace, name, MetadataPatch.builder().setAnnotation("other", "x").build());
            } catch (dev.hamilock.bind.cluster.ClusterException e) {
              throw new AssertionError(e);
            }
            return super.bind(namespace, name, uid, resourceVersion, node);
          }
        };

    BindResult p =
        PodBinder.builder(writtenMeanwhile, writtenMeanwhile, REGISTRY, locks(cluster))
            .clock(CLOCK)
            .build()
            .bind(NS, "p", "", "n1");

    assertThat(p.outcome()).as(p.reason()).isEqualTo(BindOutcome.FAILED);
    assertThat(p.failure().orElseThrow().kind()).isEqualTo(FlowFailure.Kind.CONFLICT);
    assertThat(p.failure().orElseThrow().retryable()).isTrue();
    assertThat(p.reason()).contains("ResourceVersion in precondition");
    assertThat(p.locksHeld()).isFalse();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p"))
        .containsEntry("other", "x")
        .doesNotContainKeys("hami.io/bind-phase", Fixtures.TO_ALLOCATE);
    assertThat(cluster.pods().stream().filter(c -> c.view().name().equals("p")))
        .singleElement()
        .extracting(ClusterPod::isBound)
        .isEqualTo(false);
    assertThat(Fixtures.binder(cluster).build().bind(NS, "p", "", "n1").outcome())
        .as("kube-scheduler's retry binds it")
        .isEqualTo(BindOutcome.BOUND);
  }
}
