package dev.hamilock.device.nvidia;

import static dev.hamilock.device.nvidia.Preempt.PLANNER;
import static dev.hamilock.device.nvidia.Preempt.allocated;
import static dev.hamilock.device.nvidia.Preempt.gpu;
import static dev.hamilock.device.nvidia.Preempt.running;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.preempt.DisruptionBudget;
import dev.hamilock.device.spi.preempt.NodePlan;
import dev.hamilock.device.spi.preempt.PreemptionPlan;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link dev.hamilock.device.spi.preempt.PreemptionPlanner} on real registrations ({@code
 * ../shared/fixtures/real-values.md}: F-01, one Tesla T4 of 15360 MiB and 10 slots; F-03, two A40
 * of 46068 MiB) with pods holding HAMi allocations, each case worked out by hand from
 * kube-scheduler v1.37.2's rules.
 */
class PreemptionPlannerTest {
  static final String T4 = "GPU-9a3603f4-f66e-d48b-11ea-13e327064cca";
  static final String F01 = T4 + ",10,15360,100,NVIDIA-Tesla T4,0,true:";
  static final String A40A = "GPU-03f69c50-207a-2038-9b45-23cac89cb67d";
  static final String A40B = "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae";
  static final String F03 =
      A40A
          + ",10,46068,100,NVIDIA-NVIDIA A40,0,true:"
          + A40B
          + ",10,46068,100,NVIDIA-NVIDIA A40,0,true:";

  static NodeView node(String name, String registration) {
    return NodeView.of(name, Map.of(NvidiaAnnotations.REGISTER, registration));
  }

  static PodView preemptor(ContainerView... c) {
    return PodView.builder("ns", "preemptor").containers(List.of(c)).build();
  }

  static List<String> keys(NodePlan p) {
    return p.victims().stream().map(RunningPod::key).toList();
  }

  static PreemptionPlan plan(
      PodView preemptor,
      int priority,
      List<NodeView> nodes,
      List<RunningPod> pods,
      DisruptionBudget... pdbs)
      throws Exception {
    return PLANNER.plan(preemptor, priority, nodes, pods, List.of(pdbs), DraObjects.NONE);
  }

  @Test
  void hami1527GpuMemoryShortTheLowerPodsOfOneCardGoMostImportantListedFirst() throws Exception {
    NodeView n = node("a40", F03);
    List<RunningPod> pods =
        List.of(
            running(allocated("low0", "a40", 20000, 0, A40A), 0, 100),
            running(allocated("low1", "a40", 10000, 0, A40A), 1, 200),
            running(allocated("high", "a40", 30000, 0, A40B), 100, 50));
    PodView p = preemptor(gpu(1, 40000, 0));
    assertThat(
            Preempt.FITTER
                .fit(p, Preempt.USAGE.nodeUsage(n, pods.stream().map(RunningPod::pod).toList()))
                .reason())
        .contains("CardInsufficientMemory");

    NodePlan plan = plan(p, 10, List.of(n), pods).byNode().get("a40");

    assertThat(plan.outcome()).isEqualTo(NodePlan.Outcome.PREEMPT);
    assertThat(keys(plan)).containsExactly("ns/low1", "ns/low0");
    assertThat(plan.pdbViolations()).isZero();
  }

  @Test
  void aLowerPodThatCanStayIsReprieved() throws Exception {
    List<RunningPod> pods =
        List.of(
            running(allocated("p0", "a40", 20000, 0, A40A), 0, 100),
            running(allocated("p5", "a40", 4000, 0, A40A), 5, 100),
            running(allocated("high", "a40", 40000, 0, A40B), 100, 100));

    NodePlan plan =
        plan(preemptor(gpu(1, 30000, 0)), 10, List.of(node("a40", F03)), pods).byNode().get("a40");

    assertThat(keys(plan)).containsExactly("ns/p0");
  }

  @Test
  void coresOfTheT4DecideTheLeastImportantGoes() throws Exception {
    List<RunningPod> pods = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      pods.add(running(allocated("c" + i, "t4", 2000, 30, T4), i, 100));
    }

    NodePlan plan =
        plan(preemptor(gpu(1, 2000, 30)), 5, List.of(node("t4", F01)), pods).byNode().get("t4");

    assertThat(keys(plan)).as("10 %% of the cores free, 30 %% asked").containsExactly("ns/c0");
  }

  @Test
  void slotsOfTheT4DecideTheLeastImportantGoesLatestStartedFirst() throws Exception {
    List<RunningPod> pods = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      pods.add(running(allocated("s" + i, "t4", 100, 0, T4), i % 3, 100 + i));
    }

    NodePlan plan =
        plan(preemptor(gpu(1, 100, 0)), 3, List.of(node("t4", F01)), pods).byNode().get("t4");

    assertThat(keys(plan))
        .as("priority 0 are s0 s3 s6 s9; s9 started last")
        .containsExactly("ns/s9");
  }

  @Test
  void equalPriorityIsNeverAVictim() throws Exception {
    List<RunningPod> pods = List.of(running(allocated("same", "t4", 15000, 0, T4), 5, 100));

    NodePlan plan =
        plan(preemptor(gpu(1, 8000, 0)), 5, List.of(node("t4", F01)), pods).byNode().get("t4");

    assertThat(plan.outcome()).isEqualTo(NodePlan.Outcome.NONE);
    assertThat(plan.reason())
        .startsWith("No preemption victims found for incoming pod: ")
        .contains("CardInsufficientMemory");
  }

  @Test
  void aNodeWithRoomFitsWithoutVictims() throws Exception {
    List<RunningPod> pods = List.of(running(allocated("lo", "t4", 1000, 0, T4), 0, 100));

    PreemptionPlan plan = plan(preemptor(gpu(1, 8000, 0)), 5, List.of(node("t4", F01)), pods);

    assertThat(plan.byNode().get("t4").outcome()).isEqualTo(NodePlan.Outcome.FITS);
    assertThat(plan.candidates()).isEmpty();
  }

  @Test
  void aPdbViolatingPodIsReprievedFirst() throws Exception {
    List<RunningPod> pods =
        List.of(
            running(allocated("low", "t4", 7000, 0, T4), 0, 100),
            running(allocated("high", "t4", 7000, 0, T4), 1, 100));
    PodView p = preemptor(gpu(1, 8000, 0));
    List<NodeView> t4 = List.of(node("t4", F01));

    assertThat(keys(plan(p, 5, t4, pods).byNode().get("t4"))).containsExactly("ns/low");
    NodePlan guarded =
        plan(p, 5, t4, pods, new DisruptionBudget("ns/pdb", Set.of("ns/low"), 0))
            .byNode()
            .get("t4");
    assertThat(keys(guarded)).containsExactly("ns/high");
    assertThat(guarded.pdbViolations()).isZero();
    NodePlan both =
        plan(p, 5, t4, pods, new DisruptionBudget("ns/pdb", Set.of("ns/low", "ns/high"), 0))
            .byNode()
            .get("t4");
    assertThat(keys(both)).containsExactly("ns/low");
    assertThat(both.pdbViolations()).isEqualTo(1);
  }

  @Test
  void nodesComeInPickOneNodeForPreemptionOrder() throws Exception {
    List<NodeView> nodes = new ArrayList<>();
    for (String n : List.of("a", "b", "c", "d", "e")) {
      nodes.add(node(n, F01));
    }
    List<RunningPod> pods =
        List.of(
            running(allocated("a-prio2", "a", 8000, 0, T4), 2, 100),
            running(allocated("b-early", "b", 8000, 0, T4), 0, 100),
            running(allocated("c-late", "c", 8000, 0, T4), 0, 900),
            running(allocated("d-one", "d", 4000, 0, T4), 0, 100),
            running(allocated("d-two", "d", 4000, 0, T4), 0, 100),
            running(allocated("e-guarded", "e", 8000, 0, T4), 0, 950));

    PreemptionPlan plan =
        plan(
            preemptor(gpu(1, 15000, 0)),
            5,
            nodes,
            pods,
            new DisruptionBudget("ns/pdb", Set.of("ns/e-guarded"), 0));

    assertThat(plan.candidates().stream().map(NodePlan::node))
        .as("latest start, then earlier, then more victims, then higher priority, then PDB")
        .containsExactly("c", "b", "d", "a", "e");
    assertThat(plan.best().orElseThrow().node()).isEqualTo("c");
  }

  @Test
  void aGangGoesWholeAcrossNodesOrNotAtAll() throws Exception {
    List<NodeView> nodes = List.of(node("x", F01), node("y", F01));
    PodView m1 = withGang(allocated("m1", "x", 7000, 0, T4), "g");
    PodView m2 = withGang(allocated("m2", "y", 8000, 0, T4), "g");
    RunningPod lone = running(allocated("lone", "x", 7000, 0, T4), 1, 100);
    PodView p = preemptor(gpu(1, 8000, 0));

    PreemptionPlan plan =
        plan(p, 5, nodes, List.of(running(m1, 0, 100), running(m2, 0, 100), lone));
    assertThat(keys(plan.byNode().get("x"))).containsExactly("ns/m1", "ns/m2");
    assertThat(keys(plan.byNode().get("y"))).containsExactly("ns/m1", "ns/m2");

    PreemptionPlan higherMember =
        plan(p, 5, nodes, List.of(running(m1, 0, 100), running(m2, 9, 100), lone));
    assertThat(keys(higherMember.byNode().get("x"))).containsExactly("ns/lone");
    assertThat(higherMember.byNode().get("y").outcome()).isEqualTo(NodePlan.Outcome.NONE);
  }

  /**
   * Found by the property: HAMi's fit places containers one by one on the policy's card order, so
   * with more usage on a card a two-container pod can fit where it did not with less.
   * kube-scheduler's single reprieve pass then kept p1 as a victim although evicting p3 alone is
   * enough.
   */
  @Test
  void greedyTwoContainerFitIsNotMonotoneSoTheReprieveRepeats() throws Exception {
    String reg =
        "GPU-0-0,2,24576,100,NVIDIA A10,1,true:GPU-0-1,3,40960,100,NVIDIA A100-SXM4-40GB,0,true:"
            + "GPU-0-2,2,24576,100,NVIDIA A10,0,true:";
    List<RunningPod> pods =
        List.of(
            running(allocated("p1", "n", 1000, 100, "GPU-0-0"), 0, 1001),
            running(allocated("p2", "n", 1000, 0, "GPU-0-2"), 0, 1002),
            running(allocated("p3", "n", 1000, 0, "GPU-0-1", "GPU-0-2"), 0, 1003),
            running(allocated("p6", "n", 1000, 0, "GPU-0-1"), 0, 1006));

    NodePlan plan =
        plan(preemptor(gpu(1, 19000, 0), gpu(2, 6000, 0)), 1, List.of(node("n", reg)), pods)
            .byNode()
            .get("n");

    assertThat(keys(plan)).containsExactly("ns/p3");
  }

  @Test
  void badInputIsNamed() {
    RunningPod twice = running(allocated("twice", "t4", 1000, 0, T4), 0, 100);
    assertThatThrownBy(
            () ->
                plan(
                    preemptor(gpu(1, 1000, 0)), 5, List.of(node("t4", F01)), List.of(twice, twice)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ns/twice");
    assertThatThrownBy(() -> new DisruptionBudget("ns/pdb", Set.of(), -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ns/pdb")
        .hasMessageContaining("-1");
  }

  static PodView withGang(PodView p, String gang) {
    return p.toBuilder().labels(Map.of(HamiAnnotations.POD_GROUP_LABEL, gang)).build();
  }
}
