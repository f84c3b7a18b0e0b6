package dev.hamilock.examples.gang.real;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.examples.gang.DemoResult;
import dev.hamilock.examples.gang.GangDemo;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --real-cluster}'s command line and report, without a control plane (default build). */
class RealClusterDemoOptionsTest {
  final ByteArrayOutputStream out = new ByteArrayOutputStream();
  final ByteArrayOutputStream err = new ByteArrayOutputStream();

  DemoResult gangDemo(String... args) {
    return GangDemo.run(
        List.of(args),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void gangDemoHandsTheRealClusterOptionOverAndPrintsItsHelp() {
    assertThat(gangDemo("--real-cluster", "--help").exitCode()).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains(RealClusterDemo.USAGE);
  }

  @Test
  void badOptionsAreUserErrorsNamingTheValue() {
    assertThat(gangDemo("--real-cluster", "--scenario", "nine").exitCode())
        .isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(gangDemo("--real-cluster", "--rounds=0").exitCode())
        .isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(gangDemo("--real-cluster", "--rounds", "x").exitCode())
        .isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(gangDemo("--real-cluster", "--bogus").exitCode())
        .isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(gangDemo("--real-cluster", "--work-dir").exitCode())
        .isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains(
            "--scenario nine: unknown (known: guide, sixteen, mixed, preemption)",
            "--rounds 0: must be a whole number from 1 to 10",
            "--rounds x: must be a whole number from 1 to 10",
            "unknown option --bogus with --real-cluster",
            "--work-dir needs a value");
  }

  @Test
  void aMissingExtenderJarIsAUserErrorNamingTheBuild(@TempDir Path dir) {
    Path jar = dir.resolve("hami-extender.jar");
    DemoResult r =
        gangDemo("--real-cluster", "--extender-jar", jar.toString(), "--work-dir", dir.toString());
    assertThat(r.exitCode()).isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains(
            "no extender jar at " + jar, "mvn -B -DskipTests package -pl examples/extender -am");
  }

  static ScenarioRun run(String scenario, ExtenderMode mode, long runningMs, boolean ok) {
    return new ScenarioRun(
        scenario,
        mode,
        4,
        10,
        runningMs - 5,
        runningMs,
        Map.of(
            "worker-1", "node-a", "worker-2", "node-a", "worker-3", "node-a", "worker-4", "node-b"),
        mode.hasExtender() ? Map.of("/filter", 4L, "/bind", 4L) : Map.of(),
        12,
        8,
        4,
        ok ? List.of() : List.of("p: bind-phase failed"),
        List.of(),
        40,
        3.5);
  }

  @Test
  void theComparisonUsesMediansAndMakesNoClaimWhenARunFailed() {
    ByteArrayOutputStream table = new ByteArrayOutputStream();
    RealClusterDemo.print(
        List.of(
            run("guide", ExtenderMode.GANG_RETRY, 3000, true),
            run("guide", ExtenderMode.FAIL_FAST, 9000, true),
            run("guide", ExtenderMode.GANG_RETRY, 1000, true),
            run("guide", ExtenderMode.FAIL_FAST, 1500, true),
            run("guide", ExtenderMode.GANG_RETRY, 2000, true),
            run("guide", ExtenderMode.FAIL_FAST, 6000, true),
            run("mixed", ExtenderMode.GANG_RETRY, 1000, true),
            run("mixed", ExtenderMode.FAIL_FAST, 500, false)),
        new PrintStream(table, true, StandardCharsets.UTF_8));
    String text = table.toString(StandardCharsets.UTF_8);
    assertThat(text)
        .contains(
            "guide: the guide's gang of 4 on 2 nodes; gang retry faster (median of 3: 2000 vs 6000 ms"
                + " to all Running, 3.0x)");
    assertThat(text)
        .contains("mixed: a gang of 4 and 4 plain pods on 2 nodes; no comparison: a run failed");
    assertThat(text.lines().filter(l -> l.startsWith("mixed ") && l.endsWith("FAILED"))).hasSize(1);
    assertThat(
            RealClusterDemo.median(
                List.of(
                    run("x", ExtenderMode.FAIL_FAST, 7, true),
                    run("x", ExtenderMode.FAIL_FAST, 5, true))))
        .isEqualTo(5);
    assertThat(text).doesNotContain("sixteen:");
    assertThat(text).doesNotContain("floor");
  }

  @Test
  void theFloorIsTheMedianFloorRunPlusTheBusiestNodesSerialHoldsAndEachModeIsAMultipleOfIt() {
    List<ScenarioRun> runs =
        List.of(
            run("guide", ExtenderMode.GANG_RETRY, 1500, true),
            run("guide", ExtenderMode.FAIL_FAST, 6000, true),
            run("guide", ExtenderMode.FLOOR, 900, true),
            run("guide", ExtenderMode.GANG_RETRY, 1300, true),
            run("guide", ExtenderMode.FAIL_FAST, 3000, true),
            run("guide", ExtenderMode.FLOOR, 1100, true),
            run("guide", ExtenderMode.GANG_RETRY, 2000, true),
            run("guide", ExtenderMode.FAIL_FAST, 4000, true),
            run("guide", ExtenderMode.FLOOR, 700, true));
    // three pods on node-a: floor = 900 + (3 - 1) x 20
    assertThat(runs.get(2).floorMs()).isEqualTo(940);
    assertThat(runs.get(2).busiestNodePods()).isEqualTo(3);
    ByteArrayOutputStream table = new ByteArrayOutputStream();
    RealClusterDemo.print(runs, new PrintStream(table, true, StandardCharsets.UTF_8));
    assertThat(table.toString(StandardCharsets.UTF_8))
        .contains(
            "guide: floor 940 ms (kube-scheduler alone: median of 3 900 ms, + (3 pods on the busiest"
                + " node - 1) x 20 ms hold); gang retry 1.60x the floor, fail-fast 4.26x");
    assertThat(table.toString(StandardCharsets.UTF_8).lines())
        .filteredOn(l -> l.startsWith("guide    floor"))
        .hasSize(3)
        .allSatisfy(l -> assertThat(l).contains(" 3.5 ", "{node-a=3, node-b=1}").endsWith(" ok"));
  }

  @Test
  void aFailedFloorRunMakesNoClaimAndOnlyAFloorRunHasAFloor() {
    ByteArrayOutputStream table = new ByteArrayOutputStream();
    RealClusterDemo.print(
        List.of(
            run("guide", ExtenderMode.GANG_RETRY, 1500, true),
            run("guide", ExtenderMode.FAIL_FAST, 6000, true),
            run("guide", ExtenderMode.FLOOR, 900, false)),
        new PrintStream(table, true, StandardCharsets.UTF_8));
    assertThat(table.toString(StandardCharsets.UTF_8))
        .contains("guide: the guide's gang of 4 on 2 nodes; no comparison: a run failed")
        .doesNotContain("guide: floor");
    assertThatThrownBy(() -> run("guide", ExtenderMode.GANG_RETRY, 1500, true).floorMs())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("guide gang retry is not a floor run");
    assertThatThrownBy(ExtenderMode.FLOOR::flags)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("floor runs without an extender");
    assertThat(ExtenderMode.FAIL_FAST.flags()).containsExactly("--node-lock-retry-timeout=0");
    assertThat(ExtenderMode.GPU_PREEMPTION.flags())
        .containsExactly("--node-lock-retry-timeout=28s", "--gpu-preemption");
    assertThat(ExtenderMode.withExtender()).doesNotContain(ExtenderMode.GPU_PREEMPTION);
  }

  @Test
  void floorOptionsNameTheBadScenario() {
    assertThat(gangDemo("--real-cluster", "--floor", "nine").exitCode())
        .isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(gangDemo("--real-cluster", "--chart").exitCode())
        .isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(gangDemo("--real-cluster", "--floor", "preemption").exitCode())
        .isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(
            gangDemo("--real-cluster", "--scenario", "preemption", "--scheduler-plugins", "x")
                .exitCode())
        .isEqualTo(GangDemo.EXIT_USER_ERROR);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains(
            "--floor nine: unknown (known: guide, sixteen, mixed, or none)",
            "--chart needs a value",
            "--floor preemption: unknown (known: guide, sixteen, mixed, or none)",
            "--scenario preemption runs without --scheduler-plugins only");
  }

  @Test
  void aPreemptionRunPrintsStatusVictimsTimeAndRequestsAndIsOkOnlyWithoutViolations() {
    PreemptionRun ok =
        new PreemptionRun(
            "0/4 nodes are available: 1 1/1 CardInsufficientMemory. preemption: expected at least"
                + " one victim pod on node \"node-p\"",
            List.of("low-a", "low-b"),
            4666,
            3,
            6,
            10,
            Map.of("/filter", 3L, "/bind", 1L),
            List.of(),
            2.5,
            List.of("low-c", "low-d"),
            5123,
            2,
            "Unschedulable: 0/6 nodes are available");
    PreemptionRun failed =
        new PreemptionRun(
            "",
            List.of(),
            -1,
            0,
            0,
            0,
            Map.of(),
            List.of("high: not within 90 s"),
            2.5,
            List.of(),
            -1,
            0,
            "");
    assertThat(ok.ok()).isTrue();
    assertThat(failed.ok()).isFalse();
    assertThat(
            new PreemptionRun(
                    "", List.of(), 10, 0, 0, 0, Map.of(), List.of("x"), 1, List.of(), 10, 0, "")
                .ok())
        .isFalse();
    assertThat(
            new PreemptionRun(
                    "", List.of(), 10, 0, 0, 0, Map.of(), List.of(), 1, List.of(), -1, 0, "")
                .ok())
        .as("the gang not Running")
        .isFalse();
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    PrintStream ps = new PrintStream(text, true, StandardCharsets.UTF_8);
    RealClusterDemo.print(ok, ps);
    RealClusterDemo.print(failed, ps);
    assertThat(text.toString(StandardCharsets.UTF_8))
        .contains(
            "one A40 (46068 MiB) holds gpu-low pods of 10000 + 6000 + 30000 MiB",
            "without --gpu-preemption: Pending; kube-scheduler: 0/4 nodes are available",
            "victims [low-a, low-b]; preemptor Running 4666 ms after its creation",
            "3 pods/eviction (refused ones included), 6 pod PATCH, 10 Event creates;"
                + " kube-scheduler's calls: /filter 3, /bind 1",
            "verified: ok (",
            "gang of 2 gpu-high members of 15000 MiB",
            "    pending: kube-scheduler: Unschedulable: 0/6 nodes are available",
            "victims [low-c, low-d]; both members Running 5123 ms after the PodGroup's creation;"
                + " 2 pods/eviction",
            "preemptor Running - ms",
            "verified: FAILED [high: not within 90 s]");
  }
}
