package dev.hamilock.benchmarks.report;

import dev.hamilock.benchmarks.convergence.ConvergenceResults;
import dev.hamilock.benchmarks.convergence.Scenario;
import dev.hamilock.benchmarks.convergence.ScenarioSummary;
import dev.hamilock.benchmarks.convergence.UncontendedCost;
import dev.hamilock.benchmarks.jmh.JmhSuite;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Evaluates the goals of issue 8 against one run. The headline configuration is latency 0 ms and 1
 * scheduler replica; the worst figure over all latency/replica configurations is shown beside it.
 */
public final class Goals {

  /** Algorithm key of this library with the watch wake-up. */
  public static final String OURS = "ours-watch";

  /** Algorithm key of HAMi's pod-group polling. */
  public static final String HAMI = "hami-polling";

  private Goals() {}

  /**
   * @param results convergence results (may lack this library's algorithms)
   * @param jmh JMH figures (may be empty)
   * @return the goals, in issue order
   */
  public static List<Goal> evaluate(ConvergenceResults results, List<JmhSuite.Figure> jmh) {
    List<Goal> goals = new ArrayList<>();
    Optional<UncontendedCost> ours = cost(results, OURS);
    Optional<UncontendedCost> hami = cost(results, HAMI);
    goals.add(
        new Goal(
            "uncontended acquire + release, API requests",
            "2 (HAMi: 7)",
            ours.map(
                        c ->
                            fmt0(c.acquireAndRelease())
                                + " ("
                                + fmt0(c.acquire())
                                + " + "
                                + fmt0(c.releaseSameProcess())
                                + ")")
                    .orElse("—")
                + "; HAMi "
                + hami.map(
                        c ->
                            fmt0(c.acquireAndRelease())
                                + " ("
                                + fmt0(c.acquire())
                                + " + "
                                + fmt0(c.releaseSameProcess())
                                + ")")
                    .orElse("—"),
            ours.map(c -> c.acquireAndRelease() <= 2)));
    goals.add(ratioGoal(results, 5, 1.2));
    goals.add(speedupGoal(results, 5, 3.0));
    goals.add(ratioGoal(results, 32, 1.3));
    goals.add(requestsGoal(results));
    goals.add(fitGoal(jmh));
    return goals;
  }

  private static Goal ratioGoal(ConvergenceResults results, int n, double limit) {
    Optional<ScenarioSummary> head = find(results, OURS, new Scenario(n, 1, 0, 1));
    List<ScenarioSummary> all = all(results, OURS, n);
    double worst =
        all.stream().mapToDouble(ScenarioSummary::ratioToLowerBound).max().orElse(Double.NaN);
    String measured =
        head.map(
                    s ->
                        String.format(
                            Locale.ROOT,
                            "%.2f× (%.1f ms vs %.0f ms)",
                            s.ratioToLowerBound(),
                            s.medianMs(),
                            s.lowerBoundMs()))
                .orElse("—")
            + (all.isEmpty() ? "" : String.format(Locale.ROOT, "; worst config %.2f×", worst));
    return new Goal(
        "N = " + n + ": convergence ÷ lower bound (N × hold)",
        "≤ " + limit + "×",
        measured,
        head.map(s -> s.ratioToLowerBound() <= limit));
  }

  private static Goal speedupGoal(ConvergenceResults results, int n, double limit) {
    Scenario s = new Scenario(n, 1, 0, 1);
    Optional<ScenarioSummary> ours = find(results, OURS, s);
    Optional<ScenarioSummary> hami = find(results, HAMI, s);
    Optional<Double> speedup = ours.flatMap(o -> hami.map(h -> h.medianMs() / o.medianMs()));
    double worst = Double.NaN;
    for (ScenarioSummary o : all(results, OURS, n)) {
      Optional<ScenarioSummary> h = find(results, HAMI, o.scenario());
      if (h.isPresent()) {
        double v = h.get().medianMs() / o.medianMs();
        worst = Double.isNaN(worst) ? v : Math.min(worst, v);
      }
    }
    String measured =
        speedup
                .map(
                    v ->
                        String.format(
                            Locale.ROOT, "%.1f× (HAMi %.1f ms)", v, hami.get().medianMs()))
                .orElse("—")
            + (Double.isNaN(worst)
                ? ""
                : String.format(Locale.ROOT, "; worst config %.1f×", worst));
    return new Goal(
        "N = " + n + ": speed-up over HAMi's 100 ms polling",
        "≥ " + limit + "×",
        measured,
        speedup.map(v -> v >= limit));
  }

  private static Goal requestsGoal(ConvergenceResults results) {
    List<ScenarioSummary> contended =
        results.summaries().stream()
            .filter(s -> s.algorithmKey().equals(OURS) && s.scenario().singleNode())
            .toList();
    Optional<ScenarioSummary> worst =
        contended.stream()
            .max((a, b) -> Double.compare(a.lockRequestsPerMember(), b.lockRequestsPerMember()));
    Optional<ScenarioSummary> hamiWorst =
        results.summaries().stream()
            .filter(s -> s.algorithmKey().equals(HAMI) && s.scenario().singleNode())
            .max((a, b) -> Double.compare(a.lockRequestsPerMember(), b.lockRequestsPerMember()));
    String measured =
        worst
                .map(
                    w ->
                        String.format(
                            Locale.ROOT,
                            "worst %.2f (%s)",
                            w.lockRequestsPerMember(),
                            w.scenario().describe()))
                .orElse("—")
            + hamiWorst
                .map(
                    h ->
                        String.format(
                            Locale.ROOT,
                            "; HAMi worst %.1f (%s)",
                            h.lockRequestsPerMember(),
                            h.scenario().describe()))
                .orElse("");
    return new Goal(
        "lock API requests per member under contention (acquire, waits, plugin release)",
        "≤ 3",
        measured,
        worst.map(w -> w.lockRequestsPerMember() <= 3));
  }

  private static Goal fitGoal(List<JmhSuite.Figure> jmh) {
    Optional<JmhSuite.Figure> fit =
        jmh.stream().filter(f -> f.benchmark().startsWith("FitBenchmark")).findFirst();
    return new Goal(
        "fit of one pod over 5,000 nodes × 8 GPUs (JMH)",
        "≤ 10 ms/op",
        fit.map(
                f ->
                    String.format(
                        Locale.ROOT,
                        "%.2f ± %.2f %s, %.0f B/op",
                        f.score(),
                        f.error(),
                        f.unit(),
                        f.allocBytesPerOp()))
            .orElse("—"),
        fit.filter(f -> f.unit().equals("ms/op")).map(f -> f.score() <= 10));
  }

  static Optional<UncontendedCost> cost(ConvergenceResults results, String key) {
    return results.costs().stream().filter(c -> c.algorithmKey().equals(key)).findFirst();
  }

  static Optional<ScenarioSummary> find(ConvergenceResults results, String key, Scenario scenario) {
    return results.summaries().stream()
        .filter(
            s ->
                s.algorithmKey().equals(key)
                    && s.scenario().equals(scenario)
                    && !s.timesMs().isEmpty())
        .findFirst();
  }

  private static List<ScenarioSummary> all(ConvergenceResults results, String key, int n) {
    return results.summaries().stream()
        .filter(
            s ->
                s.algorithmKey().equals(key)
                    && s.scenario().singleNode()
                    && s.scenario().gangSize() == n
                    && !s.timesMs().isEmpty())
        .toList();
  }

  private static String fmt0(double v) {
    return v == Math.rint(v) ? String.valueOf((long) v) : String.format(Locale.ROOT, "%.1f", v);
  }
}
