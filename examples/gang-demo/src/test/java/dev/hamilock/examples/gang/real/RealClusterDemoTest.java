package dev.hamilock.examples.gang.real;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code gang-demo --real-cluster --floor sixteen} once (all three scenarios, gang retry and
 * fail-fast, after one warm-up run per mode, and the floor of sixteen once) on the real control
 * plane with the real kube-scheduler v1.37.2 calling the runnable extender processes; each test
 * checks one scenario's runs. The verification inside each run ({@link RealSchedulerCluster#run}):
 * every pod bound through the extender's bind (kube-scheduler called {@code /bind} at least once
 * per pod, {@code pods/binding} created exactly once per pod — only the extender binds), HAMi's
 * allocation written ({@code bind-phase: success}, {@code vgpu-node}), handed off by its node's
 * device plugin and Running, no card over its registered slots, memory or cores, no node lock left.
 *
 * <p>The floor's one correctness run (no timing claim: rounds and ratios belong to the benchmark
 * command, testing/realcluster/SCHEDULER.md): sixteen pods Running on the node the gang-retry run
 * chose, pinned by node affinity, bound by kube-scheduler's default binder without one extender
 * call, no node written.
 *
 * <p>And {@link PreemptionScenario} once (HAMi#1527, issue 26 item 4), after them on the same
 * control plane: its verification is the scenario's own (main code, so the demo and this test
 * cannot drift); this test requires it passed and names the victims.
 *
 * <p>Wall time about 3 minutes on 2 shared cores (9 runs + control-plane and extender start), plus
 * the preemption's half minute. Needs {@code testing/realcluster/build}; {@code mvn -B verify
 * -Preal-apiserver}.
 */
@Tag("real-apiserver")
class RealClusterDemoTest {
  static RealClusterDemo.Report report;
  static String table;

  @BeforeAll
  static void runTheDemo() {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(new Tee(buf, System.out), true, StandardCharsets.UTF_8);
    report =
        RealClusterDemo.run(
            List.of(
                "--real-cluster",
                "--floor",
                "sixteen",
                "--scenario",
                "guide,sixteen,mixed," + PreemptionScenario.NAME),
            out,
            System.err);
    out.flush();
    table = buf.toString(StandardCharsets.UTF_8);
  }

  private static List<ScenarioRun> runs(String scenario) {
    return runs(report, scenario);
  }

  static List<ScenarioRun> runs(RealClusterDemo.Report report, String scenario) {
    return report.runs().stream().filter(r -> r.scenario().equals(scenario)).toList();
  }

  private static void assertBothModesVerified(String scenario, int pods) {
    assertBothModesVerified(report, scenario, pods);
  }

  static void assertBothModesVerified(RealClusterDemo.Report report, String scenario, int pods) {
    List<ScenarioRun> runs =
        runs(report, scenario).stream().filter(r -> r.mode().hasExtender()).toList();
    assertThat(runs)
        .extracting(ScenarioRun::mode)
        .containsExactly(ExtenderMode.GANG_RETRY, ExtenderMode.FAIL_FAST);
    for (ScenarioRun r : runs) {
      assertThat(r.violations()).as(scenario + " " + r.mode()).isEmpty();
      assertThat(r.locksLeft()).as(scenario + " " + r.mode() + " locks left").isEmpty();
      assertThat(r.pods()).isEqualTo(pods);
      assertThat(r.runningMs()).as(scenario + " " + r.mode() + " all Running").isPositive();
      assertThat(r.firstBoundMs()).isPositive().isLessThanOrEqualTo(r.boundMs());
      assertThat(r.boundMs()).isLessThanOrEqualTo(r.runningMs());
      assertThat(r.bindings()).isEqualTo(pods);
      assertThat(r.extenderCalls().get("/bind")).isGreaterThanOrEqualTo((long) pods);
      assertThat(r.extenderCalls().get("/filter")).isGreaterThanOrEqualTo((long) pods);
      assertThat(r.nodePatches())
          .as("one lock acquire + one release per pod at least")
          .isGreaterThanOrEqualTo(2L * pods);
      assertThat(r.placement().values().stream().mapToLong(Long::longValue).sum()).isEqualTo(pods);
    }
  }

  @Test
  void theGuidesGangOfFourOnTwoNodesIsBoundThroughTheExtenderWithRetryAndFailFast() {
    assertBothModesVerified("guide", 4);
  }

  @Test
  void sixteenMembersOnOneNodeAreBoundThroughTheExtenderWithRetryAndFailFast() {
    assertBothModesVerified("sixteen", 16);
    assertThat(runs("sixteen"))
        .allSatisfy(r -> assertThat(r.placement()).isEqualTo(Map.of("node-h20", 16L)));
  }

  @Test
  void theFloorOfSixteenRunsOnceWithoutExtenderOrLockOnThePinnedNode() {
    List<ScenarioRun> floor =
        runs("sixteen").stream().filter(r -> r.mode() == ExtenderMode.FLOOR).toList();
    assertThat(floor).hasSize(1);
    ScenarioRun r = floor.get(0);
    assertThat(r.violations()).isEmpty();
    assertThat(r.runningMs()).as("all Running").isPositive();
    assertThat(r.nodes())
        .as("placement as pinned: the gang-retry run's")
        .isEqualTo(runs("sixteen").get(0).nodes())
        .hasSize(16);
    assertThat(r.extenderCalls()).as("no extender call").isEmpty();
    assertThat(r.bindings()).as("kube-scheduler's default binder").isEqualTo(16);
    assertThat(r.nodePatches()).as("no lock written").isZero();
    assertThat(r.locksLeft()).isEmpty();
    assertThat(r.floorMs()).isEqualTo(r.runningMs() + 15 * RealSchedulerCluster.ALLOCATE_MS);
    assertThat(runs("guide")).noneMatch(x -> x.mode() == ExtenderMode.FLOOR);
  }

  @Test
  void gangAndPlainPodsMixedAreBoundThroughTheExtenderWithRetryAndFailFast() {
    assertBothModesVerified("mixed", 8);
    assertThat(runs("mixed"))
        .allSatisfy(r -> assertThat(r.placement().keySet()).isSubsetOf("node-a", "node-b"));
  }

  @Test
  void gpuMemoryShortIsPreemptedForOnlyWithTheFlagAndNeverEvictsABudgetProtectedPod() {
    assertThat(report.preemptions()).hasSize(1);
    PreemptionRun r = report.preemptions().get(0);
    assertThat(r.violations()).isEmpty();
    assertThat(r.pendingStatus()) // kube-scheduler v1.37.2's, as PreemptionScenario verifies
        .contains("1/1 CardInsufficientMemory")
        .endsWith("preemption: expected at least one victim pod on node \"node-p\"");
    assertThat(r.victims()).containsExactly("low-a", "low-b");
    assertThat(r.runningMs()).isPositive();
    assertThat(r.evictions()).as("the two victims' at least").isGreaterThanOrEqualTo(2);
    assertThat(table).contains("with --gpu-preemption:    victims [low-a, low-b]");
    // the gang half (node-q): kube-scheduler's PodGroup path filtered the members through the
    // extender and wrote Unschedulable; both evicted 20000 MiB pods, low-e (5000) reprieved
    assertThat(r.gangPendingStatus())
        .startsWith("Unschedulable: ")
        .contains("1/1 CardInsufficientMemory");
    assertThat(r.gangVictims()).containsExactly("low-c", "low-d");
    assertThat(r.gangRunningMs()).isPositive();
    assertThat(r.gangEvictions()).isEqualTo(2);
  }

  @Test
  void theDemoExitsZeroAndPrintsOneRowPerRun() {
    assertThat(report.errors()).isEmpty();
    assertThat(report.exitCode()).isZero();
    assertThat(report.runs()).hasSize(7);
    assertThat(table).contains("scenario", "Running ms", "PATCH/pod");
    for (String s : List.of("guide", "sixteen", "mixed")) {
      assertThat(table.lines().filter(l -> l.startsWith(s + " ") && l.endsWith(" ok")))
          .as(s)
          .hasSize(s.equals("sixteen") ? 3 : 2);
    }
    assertThat(table).contains("sixteen: floor ");
  }

  /** Writes to both. */
  static final class Tee extends OutputStream {
    private final OutputStream a;
    private final OutputStream b;

    Tee(OutputStream a, OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public void write(int x) throws java.io.IOException {
      a.write(x);
      b.write(x);
    }

    @Override
    public void write(byte[] buf, int off, int len) throws java.io.IOException {
      a.write(buf, off, len);
      b.write(buf, off, len);
    }
  }
}
