package dev.hamilock.examples.gang.real;

import static dev.hamilock.examples.gang.real.RealClusterDemoTest.assertBothModesVerified;
import static dev.hamilock.examples.gang.real.RealClusterDemoTest.runs;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code gang-demo --real-cluster --scheduler-plugins testing/schedplugins/bin/kube-scheduler}: the
 * guide's own scheduler — kube-scheduler v1.34.7 with scheduler-plugins v0.34.7's Coscheduling, the
 * guide's profile (Coscheduling in multiPoint, PrioritySort disabled, permitWaitingTimeSeconds 10),
 * the PodGroup CRD of the same release, the step-4 RBAC for its ServiceAccount — in front of the
 * runnable extender (gang retry and fail-fast), on the real kube-apiserver v1.37.2. Three minors
 * apart: outside the version-skew policy (no 1.34/1.35 API server can be built from the modules the
 * proxy serves; testing/realcluster/SCHEDULER.md), so this is its own profile, not part of CI's
 * real-server run: {@code testing/realcluster/build && testing/schedplugins/build && mvn -B verify
 * -Pscheduler-plugins -pl examples/gang-demo -am}. Same checks per run as {@link
 * RealClusterDemoTest}. Wall time about 3 minutes on 2 cores.
 */
@Tag("real-apiserver")
@Tag("scheduler-plugins")
class SchedulerPluginsDemoTest {
  static RealClusterDemo.Report report;
  static String table;

  @BeforeAll
  static void runTheDemoWithTheGuidesScheduler() {
    Path scheduler =
        RealClusterDemo.repositoryRoot().resolve("testing/schedplugins/bin/kube-scheduler");
    assertThat(scheduler).as("testing/schedplugins/build first").isRegularFile();
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream out =
        new PrintStream(new RealClusterDemoTest.Tee(buf, System.out), true, StandardCharsets.UTF_8);
    report =
        RealClusterDemo.run(
            List.of(
                "--real-cluster", "--scheduler-plugins", scheduler.toString(), "--floor", "none"),
            out,
            System.err);
    table = buf.toString(StandardCharsets.UTF_8);
  }

  @Test
  void theGuidesGangIsReleasedByCoschedulingAndBoundThroughTheExtender() {
    assertBothModesVerified(report, "guide", 4);
  }

  @Test
  void sixteenMembersOnOneNodeAreReleasedByCoschedulingAndBoundThroughTheExtender() {
    assertBothModesVerified(report, "sixteen", 16);
    assertThat(runs(report, "sixteen"))
        .allSatisfy(r -> assertThat(r.placement()).isEqualTo(Map.of("node-h20", 16L)));
  }

  @Test
  void gangAndPlainPodsMixedAreBoundThroughTheExtender() {
    assertBothModesVerified(report, "mixed", 8);
  }

  @Test
  void theReportNamesTheSkewAndEveryRunPassed() {
    assertThat(table).contains("Coscheduling; outside the version-skew policy");
    assertThat(report.errors()).isEmpty();
    assertThat(report.exitCode()).isZero();
    assertThat(report.runs()).hasSize(6);
  }

  @Test
  void aMissingSchedulerBinaryIsAUserErrorNamingTheBuild() throws Exception {
    Path missing = Files.createTempDirectory("no-scheduler").resolve("kube-scheduler");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    RealClusterDemo.Report r =
        RealClusterDemo.run(
            List.of("--real-cluster", "--scheduler-plugins", missing.toString()),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(r.exitCode()).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("missing " + missing, "testing/schedplugins/build");
  }
}
