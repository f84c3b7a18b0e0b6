package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.ExtenderFilter;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.GpuPreemption;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import dev.hamilock.extender.v1.ExtenderArgs;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Preemption by the extender (issue 26 item 2) on the in-memory cluster: node-b is one T4 (15360
 * MiB) holding lo10 (8000 MiB, priority 10) and lo5 (6000 MiB, priority 5), placed through the
 * extender's own Filter; node-a (2x A40, free) is removed, so "hi" (9000 MiB, priority 100) fits
 * nowhere. The planner's victim is lo10 alone (ExtenderPreemptionTest shows why).
 */
class GpuPreemptionTest {
  private final TestCluster t = new TestCluster(Duration.ofSeconds(5));
  private final Map<String, Integer> priorities = new LinkedHashMap<>();
  private final AtomicReference<Instant> now =
      new AtomicReference<>(Instant.parse("2026-12-01T10:00:00Z"));
  private final InstantSource clock = () -> now.get();
  private final NodeView nodeA =
      t.cluster.nodes().stream().filter(n -> n.name().equals("node-a")).findFirst().orElseThrow();

  GpuPreemptionTest() {
    t.cluster.removeNode("node-a");
  }

  private void place(String name, int mib, int priority) throws Exception {
    place(name, mib, priority, "node-b");
  }

  private void place(String name, int mib, int priority, String node) throws Exception {
    ObjectNode pod = t.addWorker(name, mib, false);
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(pod, List.of(node))).nodeNames())
        .contains(List.of(node));
    priorities.put(name, priority);
  }

  /** hi, which kube-scheduler found unschedulable (its PodScheduled condition). */
  private ObjectNode preemptor() throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5);
    ObjectNode hi = t.addWorker("hi", 9000, false, 100);
    t.cluster.markUnschedulable("default", "hi");
    return hi;
  }

  private List<RunningPod> running() throws ClusterException {
    List<RunningPod> out = new ArrayList<>();
    int i = 0;
    for (var e : priorities.entrySet()) {
      var p = t.cluster.readPod("default", e.getKey());
      if (p.isPresent()) {
        out.add(
            RunningPod.of(
                p.get().view().toBuilder().priority(e.getValue()).build(),
                Instant.EPOCH.plusSeconds(i++)));
      }
    }
    return out;
  }

  private List<PodView> unbound() {
    return t.cluster.pods().stream().filter(p -> !p.isBound()).map(ClusterPod::view).toList();
  }

  private GpuPreemption worker(Executor executor) {
    return new GpuPreemption(
        t.cluster,
        t.cluster,
        t.config.schedulerFlags().podFitter(t.registry),
        this::running,
        t.cluster::nodes,
        this::unbound,
        executor,
        8,
        GpuPreemption.DEFAULT_HOLD,
        clock);
  }

  private PodView stored(String name) throws Exception {
    return t.cluster.readPod("default", name).orElseThrow().view();
  }

  private List<String> reasons(String pod) {
    return t.cluster.events().stream()
        .filter(e -> e.name().equals(pod))
        .map(e -> e.type() + " " + e.reason())
        .toList();
  }

  /** A Filter that writes nothing, on the test's clock. */
  private FilterDecision filterAlone(String pod) throws Exception {
    ExtenderFilter f =
        ExtenderFilter.builder(t.cluster, t.registry)
            .fitter(t.config.schedulerFlags().podFitter(t.registry))
            .clock(clock)
            .build();
    return f.filter(stored(pod), List.of("node-b"));
  }

  /**
   * An executor whose {@code execute} throws an unchecked exception other than a rejection (one
   * shut down that says so with IllegalStateException, a bug): on 5adf109 it escaped submit and
   * left the pod's UID queued, so no preemption was ever submitted for that pod again.
   */
  @Test
  void anExecutorsUncheckedExceptionIsARejectionThatLeavesThePodFreeToBeSubmittedAgain()
      throws Exception {
    preemptor();
    AtomicBoolean thrown = new AtomicBoolean();
    Executor once =
        task -> {
          if (thrown.compareAndSet(false, true)) {
            throw new IllegalStateException("injected executor bug");
          }
          task.run();
        };
    GpuPreemption w = worker(once);
    assertThat(w.submit(stored("hi"), List.of("node-b"))).isFalse();
    assertThat(t.cluster.evictions()).isEmpty();
    assertThat(w.submit(stored("hi"), List.of("node-b"))).isTrue();
    assertThat(t.cluster.evictions()).containsExactly("default/lo10");
  }

  /**
   * The cluster suppliers (running pods, nodes) are ports too: an unchecked exception or a null
   * from one is a ClusterException UNAVAILABLE from preempt, before anything is reserved or
   * evicted; on 5adf109 the exception (or an NPE) escaped preempt.
   */
  @Test
  void aClusterCallsUncheckedExceptionOrNullIsAClusterExceptionBeforeAnyWrite() throws Exception {
    preemptor();
    List<String> wrong = new ArrayList<>();
    for (String which : List.of("running", "nodes")) {
      for (boolean nul : List.of(false, true)) {
        dev.hamilock.bind.cluster.KubernetesWire.ClusterCall<List<RunningPod>> r =
            which.equals("running") ? () -> broken(nul) : this::running;
        dev.hamilock.bind.cluster.KubernetesWire.ClusterCall<List<NodeView>> n =
            which.equals("nodes") ? () -> broken(nul) : t.cluster::nodes;
        GpuPreemption w =
            new GpuPreemption(
                t.cluster,
                t.cluster,
                t.config.schedulerFlags().podFitter(t.registry),
                r,
                n,
                this::unbound,
                Runnable::run,
                8,
                GpuPreemption.DEFAULT_HOLD,
                clock);
        String run = which + (nul ? " null" : " throwing");
        try {
          wrong.add(run + ": preempt answered " + w.preempt(stored("hi"), List.of("node-b")));
        } catch (ClusterException e) {
          if (e.kind() != ClusterException.Kind.UNAVAILABLE) {
            wrong.add(run + ": " + e);
          }
        } catch (RuntimeException e) {
          wrong.add(run + ": preempt threw " + e);
        }
      }
    }
    assertThat(wrong).isEmpty();
    assertThat(t.cluster.evictions()).isEmpty();
    assertThat(stored("hi").annotations()).doesNotContainKey(UsageReconstructor.RESERVATION);
  }

  private static <T> T broken(boolean nul) {
    if (nul) {
      return null;
    }
    throw new IllegalStateException("injected supplier bug");
  }

  @Test
  void plannedVictimsAreEvictedNobodyElse() throws Exception {
    ObjectNode hi = preemptor();
    t.extender.preempting(worker(Runnable::run));
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b"))).failedNodes())
        .isPresent();
    assertThat(t.cluster.evictions()).containsExactly("default/lo10");
    assertThat(reasons("lo10")).containsExactly("Normal Preempted");
    assertThat(reasons("hi")).containsExactly("Normal Preempting");
    assertThat(stored("hi").annotations())
        .containsEntry(UsageReconstructor.RESERVATION, "node-b,2026-12-01T10:05:00Z")
        .containsEntry("hami.io/vgpu-node", "node-b");
    // while lo10 terminates, hi's Filter fails again: no second preemption (the reservation holds)
    t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b")));
    assertThat(t.cluster.evictions()).containsExactly("default/lo10");
  }

  @Test
  void theFilterOnlySubmitsOncePerPod() throws Exception {
    ObjectNode hi = preemptor();
    List<Runnable> queued = new ArrayList<>();
    t.extender.preempting(worker(queued::add));
    t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b")));
    t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b")));
    assertThat(queued).hasSize(1); // deduplicated by UID, nothing ran in the Filter's call
    assertThat(t.cluster.evictions()).isEmpty();
    queued.get(0).run();
    assertThat(t.cluster.evictions()).containsExactly("default/lo10");
  }

  @Test
  void aCardAResourceClaimHoldsIsNeverPlannedOn() throws Exception {
    preemptor();
    // the T4 of node-b is also allocated whole to a ResourceClaim through DRA: evicting lo10 (or
    // anyone) frees nothing hi could use
    t.claimTheT4Whole();
    assertThat(worker(Runnable::run).preempt(stored("hi"), List.of("node-b"))).isEmpty();
    assertThat(t.cluster.evictions()).isEmpty();
    assertThat(stored("hi").annotations()).doesNotContainKey(UsageReconstructor.RESERVATION);
  }

  @Test
  void aBudgetRefusalEvictsNothingOfThatSetAndReleasesTheReservation() throws Exception {
    preemptor();
    t.cluster.refuseEviction("default", "lo10");
    // lo10 kept, lo5 alone frees 7360 < 9000 MiB: no other plan
    assertThat(worker(Runnable::run).preempt(stored("hi"), List.of("node-b"))).isEmpty();
    assertThat(t.cluster.evictions()).isEmpty();
    assertThat(reasons("hi")).containsExactly("Warning PreemptionRefused");
    assertThat(stored("hi").annotations())
        .containsEntry(UsageReconstructor.RESERVATION, "node-b,2026-12-01T10:00:00Z");
    t.addWorker("small", 1000, false); // 1360 MiB are free only if hi's 9000 are not counted
    assertThat(filterAlone("small").node()).contains("node-b");
  }

  @Test
  void aLowerPriorityPodDoesNotGetTheFreedSlicesWhileTheReservationHolds() throws Exception {
    preemptor();
    worker(Runnable::run).preempt(stored("hi"), List.of("node-b"));
    t.cluster.deletePod("default", "lo10"); // the victim terminated
    t.addWorker("lo1", 9000, false);
    assertThat(filterAlone("lo1").node()).isEmpty();
    assertThat(filterAlone("hi").node()).contains("node-b");
    now.set(now.get().plus(GpuPreemption.DEFAULT_HOLD));
    assertThat(filterAlone("lo1").node()).contains("node-b"); // expired: no longer counted
  }

  @Test
  void theFilterAndTheBindsRefitAgreeOnALiveAndAnExpiredReservation() throws Exception {
    preemptor();
    worker(Runnable::run).preempt(stored("hi"), List.of("node-b"));
    t.cluster.deletePod("default", "lo10");
    t.addWorker("lo1", 9000, false);
    PodBinder binder =
        TestCluster.binder(t.config, t.cluster, t.cluster, t.registry, t.locks)
            .clock(clock)
            .build();
    assertThat(filterAlone("lo1").node()).isEmpty();
    assertThat(binder.bind("default", "lo1", "uid-lo1", "node-b").outcome())
        .isEqualTo(BindOutcome.DOES_NOT_FIT);
    now.set(now.get().plus(GpuPreemption.DEFAULT_HOLD));
    assertThat(filterAlone("lo1").node()).contains("node-b");
    assertThat(binder.bind("default", "lo1", "uid-lo1", "node-b").outcome())
        .isEqualTo(BindOutcome.BOUND);
  }

  @Test
  void aReservedPreemptorIsNeverALaterVictim() throws Exception {
    preemptor();
    worker(Runnable::run).preempt(stored("hi"), List.of("node-b"));
    t.cluster.deletePod("default", "lo10"); // left: lo5 6000 MiB placed, hi 9000 MiB reserved
    priorities.put("hi", 100); // listed as the extender's RunningPods list it (hami.io/vgpu-node)
    t.addWorker("top", 15000, false, 100); // fits only if hi's reservation went too
    t.cluster.markUnschedulable("default", "top");
    assertThat(worker(Runnable::run).preempt(stored("top"), List.of("node-b"))).isEmpty();
    assertThat(t.cluster.evictions()).containsExactly("default/lo10");
    assertThat(stored("hi").annotations())
        .containsEntry(UsageReconstructor.RESERVATION, "node-b,2026-12-01T10:05:00Z");
  }

  /**
   * As {@link #aReservedPreemptorIsNeverALaterVictim}, top of higher priority than hi: hi's
   * reservation on node-b is dropped, as kube-scheduler clears lower-priority nominations on the
   * node it preempts on, and lo5 is evicted for top.
   */
  @Test
  void aLowerPriorityReservationIsDroppedForAHigherPriorityPreemptor() throws Exception {
    hiReservedThenTopUnschedulable();
    assertThat(worker(Runnable::run).preempt(stored("top"), List.of("node-b")))
        .containsExactly("default/lo5");
    assertThat(stored("hi").annotations())
        .containsEntry(UsageReconstructor.RESERVATION, "node-b,2026-12-01T10:00:00Z");
    assertThat(reasons("hi")).contains("Normal PreemptionReservationDropped");
    assertThat(stored("top").annotations())
        .containsEntry(UsageReconstructor.RESERVATION, "node-b,2026-12-01T10:05:00Z");
    t.cluster.deletePod("default", "lo5");
    assertThat(filterAlone("top").node()).contains("node-b");
    assertThat(filterAlone("hi").node()).isEmpty();
  }

  /** Found on the real kube-scheduler: its PodScheduled condition write raced the reservation. */
  @Test
  void aPreemptorWrittenBetweenTheReadAndTheReservationIsStillPreemptedFor() throws Exception {
    preemptor();
    AtomicBoolean written = new AtomicBoolean();
    t.cluster.faults(
        (op, target) -> {
          if (op == InMemoryCluster.Operation.PATCH_POD
              && target.equals("default/hi")
              && written.compareAndSet(false, true)) {
            try { // as kube-scheduler's status write after the failed cycle
              t.cluster.patchPodMetadata(
                  "default", "hi", MetadataPatch.builder().setLabel("cycle", "1").build());
            } catch (ClusterException e) {
              throw new AssertionError(e);
            }
          }
          return InMemoryCluster.Fault.NONE;
        });
    assertThat(worker(Runnable::run).preempt(stored("hi"), List.of("node-b")))
        .containsExactly("default/lo10");
    assertThat(written).isTrue();
  }

  /** The Filter's own annotations replace a released or expired reservation. */
  @Test
  void aPreemptorPassingTheFilterAfterItsReservationExpiredIsCountedAsAnyFilteredPod()
      throws Exception {
    ObjectNode hi = preemptor();
    worker(Runnable::run).preempt(stored("hi"), List.of("node-b"));
    t.cluster.deletePod("default", "lo10");
    now.set(now.get().plus(GpuPreemption.DEFAULT_HOLD)); // expired before hi was tried again
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b"))).nodeNames())
        .contains(List.of("node-b"));
    assertThat(stored("hi").annotations()).doesNotContainKey(UsageReconstructor.RESERVATION);
    t.addWorker("lo1", 9000, false);
    assertThat(filterAlone("lo1").node()).isEmpty(); // hi's Filter allocation counts
  }

  @Test
  void twoWorkersRacingForOnePreemptorEvictOnce() throws Exception {
    preemptor();
    GpuPreemption a = worker(Runnable::run);
    GpuPreemption b = worker(Runnable::run);
    PodView hi = stored("hi");
    AtomicBoolean raced = new AtomicBoolean();
    t.cluster.faults(
        (op, target) -> {
          if (op == InMemoryCluster.Operation.PATCH_POD
              && target.equals("default/hi")
              && raced.compareAndSet(false, true)) {
            try { // b runs whole between a's read of hi and a's reservation patch
              b.preempt(hi, List.of("node-b"));
            } catch (Exception e) {
              throw new AssertionError(e);
            }
          }
          return InMemoryCluster.Fault.NONE;
        });
    a.preempt(hi, List.of("node-b"));
    assertThat(raced).isTrue();
    assertThat(t.cluster.evictions()).containsExactly("default/lo10");
  }

  /** Gang g of pending members g1 and g2 (7000 MiB each, priority 100); g1 failed the Filter. */
  private void gang(int members) throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5);
    for (int i = 1; i <= members; i++) {
      t.addWorker("g" + i, 7000, true, 100);
    }
    t.cluster.markUnschedulable("default", "g1");
  }

  /**
   * Planned together: g1 alone would evict lo5 (7360 MiB free) and g2 alone the same (a planner of
   * one pod double-books them); together lo5 goes for g1 and lo10 for g2, each holding its own
   * slices.
   */
  @Test
  void aGangPreemptorsPendingMembersArePlannedTogether() throws Exception {
    gang(2);
    assertThat(worker(Runnable::run).preempt(stored("g1"), List.of("node-b")))
        .containsExactlyInAnyOrder("default/lo10", "default/lo5");
    assertThat(t.cluster.evictions()).containsExactlyInAnyOrder("default/lo10", "default/lo5");
    for (String g : List.of("g1", "g2")) {
      assertThat(stored(g).annotations())
          .containsEntry(UsageReconstructor.RESERVATION, "node-b,2026-12-01T10:05:00Z");
    }
    t.cluster.deletePod("default", "lo10");
    t.cluster.deletePod("default", "lo5");
    assertThat(filterAlone("g1").node()).contains("node-b"); // g2's 7000 MiB counted: 8360 left
    assertThat(filterAlone("g2").node()).contains("node-b");
    t.addWorker("lo1", 2000, false); // 1360 MiB are free once both members are counted
    assertThat(filterAlone("lo1").node()).isEmpty();
    // while the victims terminate, a member's Filter fails again: no second preemption
    assertThat(worker(Runnable::run).preempt(stored("g1"), List.of("node-b"))).isEmpty();
    t.cluster.markUnschedulable("default", "g2");
    assertThat(worker(Runnable::run).preempt(stored("g2"), List.of("node-b"))).isEmpty();
  }

  @Test
  void aGangWhoseMembersCannotAllBePlacedEvictsNobody() throws Exception {
    gang(3); // 21000 MiB: more than the T4 holds with everyone gone
    assertThat(worker(Runnable::run).preempt(stored("g1"), List.of("node-b"))).isEmpty();
    assertThat(t.cluster.evictions()).isEmpty();
    for (String g : List.of("g1", "g2", "g3")) {
      assertThat(stored(g).annotations()).doesNotContainKey(UsageReconstructor.RESERVATION);
    }
  }

  /**
   * g1 was filtered on node-b alone, g2 on node-a (both A40s held by fill1 and fill2, 40000 MiB
   * each, priorities 1 and 2), g3 on no node this worker recorded. The three members (21000 MiB) do
   * not fit node-b's T4 with everyone gone; planned on the union of the nodes recorded for them,
   * fill1 goes and all three are placed on node-a. Planned on g1's nodes alone, nothing was
   * evicted.
   */
  @Test
  void aGangIsPlannedOnTheNodesRecordedForEveryMember() throws Exception {
    t.cluster.addNode(nodeA);
    place("fill1", 40000, 1, "node-a");
    place("fill2", 40000, 2, "node-a");
    gang(3);
    GpuPreemption w = worker(Runnable::run);
    w.filtered(stored("g2"), List.of("node-a"));
    assertThat(w.preempt(stored("g1"), List.of("node-b"))).containsExactly("default/fill1");
    assertThat(t.cluster.evictions()).containsExactly("default/fill1");
    for (String g : List.of("g1", "g2", "g3")) {
      assertThat(stored(g).annotations())
          .containsEntry(UsageReconstructor.RESERVATION, "node-a,2026-12-01T10:05:00Z");
    }
  }

  /**
   * As {@link #aLowerPriorityReservationIsDroppedForAHigherPriorityPreemptor}, hi's reservation
   * rewritten (another replica's, a new expiry) after the worker read it: the drop is conditioned
   * on the version read, so the 409 leaves the new reservation and no Event says it was dropped.
   */
  @Test
  void aLowerPriorityReservationRewrittenMeanwhileIsNotDropped() throws Exception {
    hiReservedThenTopUnschedulable();
    String rewritten = "node-b,2026-12-01T10:07:00Z";
    AtomicBoolean written = new AtomicBoolean();
    t.cluster.faults(
        (op, target) -> {
          if (op == InMemoryCluster.Operation.PATCH_POD
              && target.equals("default/hi")
              && written.compareAndSet(false, true)) {
            try {
              t.cluster.patchPodMetadata(
                  "default",
                  "hi",
                  MetadataPatch.builder()
                      .setAnnotation(UsageReconstructor.RESERVATION, rewritten)
                      .build());
            } catch (ClusterException e) {
              throw new AssertionError(e);
            }
          }
          return InMemoryCluster.Fault.NONE;
        });
    worker(Runnable::run).preempt(stored("top"), List.of("node-b"));
    assertThat(written).isTrue();
    assertThat(stored("hi").annotations()).containsEntry(UsageReconstructor.RESERVATION, rewritten);
    assertThat(reasons("hi")).doesNotContain("Normal PreemptionReservationDropped");
  }

  @Test
  void aRefusalEvictsNothingFurtherForAGangAndReleasesItsReservations() throws Exception {
    gang(2);
    t.cluster.refuseEviction("default", "lo10"); // g2's victim; g1's, lo5, goes first
    assertThat(worker(Runnable::run).preempt(stored("g1"), List.of("node-b")))
        .containsExactly("default/lo5");
    assertThat(t.cluster.evictions()).containsExactly("default/lo5");
    assertThat(reasons("g2")).containsExactly("Warning PreemptionRefused");
    for (String g : List.of("g1", "g2")) {
      assertThat(stored(g).annotations())
          .containsEntry(UsageReconstructor.RESERVATION, "node-b,2026-12-01T10:00:00Z");
    }
  }

  @Test
  void aFilterForAPodKubeSchedulerNeverFoundUnschedulableEvictsNothing() throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5);
    ObjectNode hi = t.addWorker("hi", 9000, false, 100);
    t.extender.preempting(worker(Runnable::run));
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b"))).failedNodes())
        .isPresent();
    assertThat(worker(Runnable::run).preempt(stored("hi"), List.of("node-b"))).isEmpty();
    assertThat(t.cluster.evictions()).isEmpty();
    assertThat(stored("hi").annotations()).doesNotContainKey(UsageReconstructor.RESERVATION);
    assertThat(reasons("hi")).isEmpty();
    t.cluster.markUnschedulable("default", "hi");
    t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b")));
    assertThat(t.cluster.evictions()).containsExactly("default/lo10");
  }

  @Test
  void aForgedFilterBodyClaimingAHighPriorityEvictsNothing() throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5);
    ObjectNode forged = t.addWorker("hi", 9000, false); // stored: priority 0
    t.cluster.markUnschedulable("default", "hi"); // only the priority stops it
    ((ObjectNode) forged.get("spec")).put("priority", 1000);
    t.extender.preempting(worker(Runnable::run));
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(forged, List.of("node-b"))).failedNodes())
        .isPresent();
    assertThat(t.cluster.evictions()).isEmpty();
    assertThat(stored("hi").annotations()).doesNotContainKey(UsageReconstructor.RESERVATION);
    // the worker's own fresh read decides too, whatever view a caller hands it
    PodView claimed = stored("hi").toBuilder().priority(1000).build();
    assertThat(worker(Runnable::run).preempt(claimed, List.of("node-b"))).isEmpty();
    assertThat(t.cluster.evictions()).isEmpty();
  }

  @Test
  void aStoredPreemptionPolicyNeverEvictsNothingWhateverTheBodySays() throws Exception {
    place("lo10", 8000, 10);
    ObjectNode pod = t.addWorker("hi", 9000, false, 100);
    t.cluster.deletePod("default", "hi");
    ((ObjectNode) pod.get("spec")).put("preemptionPolicy", "Never");
    t.cluster.addPod(dev.hamilock.device.spi.view.JsonViews.podView(pod));
    t.cluster.markUnschedulable("default", "hi"); // only the policy stops it
    ((ObjectNode) pod.get("spec")).remove("preemptionPolicy");
    PodView claimed = stored("hi").toBuilder().preemptionPolicy(null).build();
    assertThat(worker(Runnable::run).preempt(claimed, List.of("node-b"))).isEmpty();
    t.extender.preempting(worker(Runnable::run));
    t.extender.filter(ExtenderArgs.ofNodeNames(pod, List.of("node-b")));
    assertThat(t.cluster.evictions()).isEmpty();
  }

  @Test
  void withTheFlagOffNothingHappens() throws Exception {
    ObjectNode hi = preemptor();
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b"))).failedNodes())
        .isPresent();
    assertThat(t.cluster.evictions()).isEmpty();
    assertThat(stored("hi").annotations()).doesNotContainKey(UsageReconstructor.RESERVATION);
  }

  /**
   * A /filter naming only the full node-b for hi, which fits node-a's free A40s: kube-scheduler
   * never preempts for a pod that fits somewhere (PostFilter runs only when Filter found no
   * feasible node). Before the node-wide re-fit, the request's node list (forged, replayed or a
   * large cluster's sample) made the worker evict lo10 (found by a reviewer, breaker2).
   */
  @Test
  void aFilterNamingOnlyAFullNodeEvictsNothingWhileThePodFitsAnotherNode() throws Exception {
    t.cluster.addNode(nodeA);
    ObjectNode hi = preemptor();
    t.extender.preempting(worker(Runnable::run));
    assertThat(
            t.extender
                .filterChecked(ExtenderArgs.ofNodeNames(hi, List.of("node-a", "node-b")))
                .nodeNames())
        .contains(List.of("node-a"));
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b"))).failedNodes())
        .isPresent();
    assertThat(t.cluster.evictions()).isEmpty();
    assertThat(stored("hi").annotations()).doesNotContainKey(UsageReconstructor.RESERVATION);
  }

  /**
   * Breaker: one of node-a's two A40s is held whole by a ResourceClaim, so hi (9000 MiB) still fits
   * the other, and a /filter naming only the full node-b (forged, replayed or a large cluster's
   * sample) must evict nothing. The worker read the DRA objects of the request's nodes alone, which
   * a port may answer with those nodes' ResourceSlices only (KubernetesWire.DraReads: {@code
   * fieldSelector=spec.nodeName=node-b} for one node; InMemoryCluster now answers so); node-a's
   * claim then named a device no slice published, node-a's usage was unknown, and lo10 was evicted.
   */
  @Test
  void aClaimOnAnotherFilteredNodeIsResolvedBeforeThatNodeIsRuledOut() throws Exception {
    t.cluster.addNode(nodeA);
    String a40 = "GPU-03f69c50-207a-2038-9b45-23cac89cb67d";
    t.cluster.setDra(
        new DraObjects(
            List.of(
                new ResourceSliceView(
                    "node-a-gpu",
                    "gpu.nvidia.com",
                    "node-a",
                    1,
                    "node-a",
                    List.of(new ResourceSliceView.Device("gpu-0", Map.of("uuid", a40), Map.of())))),
            List.of(
                new ResourceClaimView(
                    "default",
                    "an-a40",
                    "u1",
                    true,
                    "node-a",
                    List.of(
                        new ResourceClaimView.Result(
                            "gpu.nvidia.com",
                            "node-a",
                            "gpu-0",
                            Optional.empty(),
                            Map.of(),
                            false)),
                    Set.of()))));
    ObjectNode hi = preemptor();
    t.extender.preempting(worker(Runnable::run));
    assertThat(
            t.extender
                .filterChecked(ExtenderArgs.ofNodeNames(hi, List.of("node-a", "node-b")))
                .nodeNames())
        .contains(List.of("node-a"));
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b"))).failedNodes())
        .isPresent();
    assertThat(t.cluster.evictions()).isEmpty();
    assertThat(stored("hi").annotations()).doesNotContainKey(UsageReconstructor.RESERVATION);
  }

  /**
   * kube-scheduler filters hi only on the full node-b (its node affinity or a taint rules node-a
   * out before the extender is asked), while node-a has room: hi is preempted for on node-b. A
   * check over every node of the cluster evicted nothing here (found on the real kube-scheduler by
   * the scenario now in examples/gang-demo's PreemptionScenario, where nodes with free GPUs fail
   * the pod's node affinity).
   */
  @Test
  void aNodeKubeSchedulerNeverFilteredThePodOnDoesNotStopThePreemption() throws Exception {
    t.cluster.addNode(nodeA);
    ObjectNode hi = preemptor();
    t.extender.preempting(worker(Runnable::run));
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b"))).failedNodes())
        .isPresent();
    assertThat(t.cluster.evictions()).isNotEmpty();
  }

  /**
   * lo10 was re-created under its name (another UID) after the worker's list was read: its eviction
   * by the old UID is a 409 (kube-apiserver's UID precondition; a timeout on a real server after
   * its ~10 s retry). The worker re-reads, treats the old lo10 as gone and goes on; it used to
   * throw, leaving the reservation held for 5 minutes (found by a reviewer, breaker2).
   */
  @Test
  void aVictimReCreatedUnderItsNameIsTreatedAsGone() throws Exception {
    preemptor();
    PodView old = stored("lo10");
    t.cluster.deletePod("default", "lo10");
    String newUid = "uid-lo10-again";
    t.cluster.addPod(old.toBuilder().uid(newUid).annotations(Map.of()).build()); // Pending
    GpuPreemption w =
        new GpuPreemption(
            t.cluster,
            t.cluster,
            t.config.schedulerFlags().podFitter(t.registry),
            () ->
                List.of(
                    RunningPod.of(old.toBuilder().priority(10).build(), Instant.EPOCH),
                    running().get(1)),
            t.cluster::nodes,
            this::unbound,
            Runnable::run,
            8,
            GpuPreemption.DEFAULT_HOLD,
            clock);
    assertThat(w.preempt(stored("hi"), List.of("node-b"))).containsExactly("default/lo10");
    assertThat(t.cluster.evictions()).isEmpty(); // the new lo10 (not placed) was not evicted
    assertThat(stored("lo10").uid()).isEqualTo(newUid);
    assertThat(stored("lo10").deleting()).isFalse();
    assertThat(reasons("hi")).containsExactly("Normal Preempting");
  }

  /**
   * A reviewer's finding: the record of the nodes kube-scheduler filtered a pod on was cleared
   * whole once 4096 pods were recorded (pods bound or deleted are never dropped from it), so on a
   * cluster that filtered 4096 other pods since, hi's genuine /filter naming the roomy node-a is
   * forgotten and a forged /filter naming only the full node-b evicts lo10 while hi fits node-a
   * without victims: the same eviction as {@link
   * #aFilterNamingOnlyAFullNodeEvictsNothingWhileThePodFitsAnotherNode}, reached by traffic alone.
   */
  @Test
  void aForgedFilterAfter4096OtherPodsWereFilteredEvictsNothingWhileThePodFitsAnotherNode()
      throws Exception {
    t.cluster.addNode(nodeA);
    ObjectNode hi = preemptor();
    GpuPreemption w = worker(Runnable::run);
    t.extender.preempting(w);
    assertThat(
            t.extender
                .filterChecked(ExtenderArgs.ofNodeNames(hi, List.of("node-a", "node-b")))
                .nodeNames())
        .contains(List.of("node-a"));
    PodView other = stored("lo5");
    for (int i = 0; i < 4096; i++) { // what the extender records for each other pod's /filter
      w.filtered(other.toBuilder().uid("uid-other-" + i).build(), List.of("node-b"));
    }
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(hi, List.of("node-b"))).failedNodes())
        .isPresent();
    assertThat(t.cluster.evictions()).as("evicted while hi fits node-a without victims").isEmpty();
  }

  /**
   * hi preempted for on node-b (its victim lo10 gone), then top, of higher priority, unschedulable.
   */
  private void hiReservedThenTopUnschedulable() throws Exception {
    preemptor();
    worker(Runnable::run).preempt(stored("hi"), List.of("node-b"));
    t.cluster.deletePod("default", "lo10");
    priorities.put("hi", 100);
    t.addWorker("top", 15000, false, 1000);
    t.cluster.markUnschedulable("default", "top");
  }
}
