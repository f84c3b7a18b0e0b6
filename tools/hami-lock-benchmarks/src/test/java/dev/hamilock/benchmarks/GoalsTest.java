package dev.hamilock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.benchmarks.convergence.ConvergenceResults;
import dev.hamilock.benchmarks.convergence.HarnessSettings;
import dev.hamilock.benchmarks.convergence.Scenario;
import dev.hamilock.benchmarks.convergence.ScenarioSummary;
import dev.hamilock.benchmarks.convergence.UncontendedCost;
import dev.hamilock.benchmarks.jmh.JmhSuite;
import dev.hamilock.benchmarks.report.Goal;
import dev.hamilock.benchmarks.report.Goals;
import dev.hamilock.benchmarks.report.ReportWriter;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Goal verdicts follow the figures: met, not met, or not measured when an algorithm is missing. */
class GoalsTest {

  private static ScenarioSummary summary(
      String key, boolean ours, int n, double medianMs, double lockPerMember) {
    Scenario s = new Scenario(n, 1, 0, 1);
    return new ScenarioSummary(
        s,
        key,
        key,
        ours,
        List.of(medianMs),
        0,
        n * 20.0,
        lockPerMember,
        1,
        1,
        1,
        0,
        0,
        Map.of(),
        0);
  }

  private static ConvergenceResults results(
      double oursN5, double hamiN5, double oursN32, double oursReq) {
    return new ConvergenceResults(
        HarnessSettings.defaults(),
        List.of(
            new UncontendedCost("ours-watch", "c", true, 1, 1, 2, "", "", ""),
            new UncontendedCost("hami-polling", "a", false, 4, 3, 3, "", "", "")),
        List.of(
            summary("hami-polling", false, 5, hamiN5, 11),
            summary("ours-watch", true, 5, oursN5, oursReq),
            summary("ours-watch", true, 32, oursN32, oursReq)));
  }

  private static Map<String, Optional<Boolean>> verdicts(
      ConvergenceResults r, List<JmhSuite.Figure> jmh) {
    return Goals.evaluate(r, jmh).stream()
        .collect(java.util.stream.Collectors.toMap(Goal::name, Goal::met));
  }

  @Test
  void goalsMetWhenFiguresAreWithinTheTargets() {
    List<JmhSuite.Figure> jmh =
        List.of(new JmhSuite.Figure("FitBenchmark.filterAllNodesPickBest", 8, 1, "ms/op", 1, 1));
    List<Goal> goals = Goals.evaluate(results(110, 400, 800, 2.5), jmh);
    assertThat(goals).hasSize(6).allSatisfy(g -> assertThat(g.met()).as(g.name()).contains(true));
    assertThat(goals.get(0).measured()).startsWith("2 (1 + 1); HAMi 7 (4 + 3)");
  }

  @Test
  void goalsNotMetWhenFiguresMissTheTargets() {
    List<JmhSuite.Figure> jmh =
        List.of(new JmhSuite.Figure("FitBenchmark.filterAllNodesPickBest", 12, 1, "ms/op", 1, 1));
    List<Goal> goals = Goals.evaluate(results(130, 300, 900, 5.8), jmh);
    assertThat(goals.subList(1, 6))
        .allSatisfy(g -> assertThat(g.met()).as(g.name()).contains(false));
    assertThat(goals.get(1).verdict()).isEqualTo("NOT met");
  }

  @Test
  void goalsNotMeasuredWithoutOurAlgorithmOrJmh() {
    ConvergenceResults r =
        new ConvergenceResults(
            HarnessSettings.defaults(),
            List.of(),
            List.of(summary("hami-polling", false, 5, 400, 11)));
    assertThat(verdicts(r, List.of()).values()).allSatisfy(v -> assertThat(v).isEmpty());
    assertThat(ReportWriter.csv(r).lines()).hasSize(2);
  }
}
