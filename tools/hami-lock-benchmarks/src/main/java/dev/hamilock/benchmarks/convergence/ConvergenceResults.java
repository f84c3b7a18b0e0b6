package dev.hamilock.benchmarks.convergence;

import java.util.List;
import java.util.Objects;

/**
 * Everything one harness run measured.
 *
 * @param costs uncontended request cost per algorithm
 * @param summaries one per scenario and algorithm, scenario-major in {@link Scenario#matrix()}
 *     order
 */
public record ConvergenceResults(
    HarnessSettings settings, List<UncontendedCost> costs, List<ScenarioSummary> summaries) {
  /** Copies the lists. @throws NullPointerException if a component is null */
  public ConvergenceResults {
    Objects.requireNonNull(settings, "settings");
    costs = List.copyOf(costs);
    summaries = List.copyOf(summaries);
  }
}
