package dev.hamilock.benchmarks.convergence;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.testkit.RequestKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The figures of one scenario and one algorithm over its repetitions. Times are in ms
 * (machine-dependent); request counts are per member, medians over the repetitions.
 *
 * @param algorithmKey {@link Algorithm#key()}
 * @param algorithmLabel {@link Algorithm#label()}
 * @param ours whether the algorithm is this library's
 * @param timesMs convergence time of each converged repetition, in run order
 * @param failedRuns repetitions that did not converge (excluded from the times)
 * @param lowerBoundMs {@link Scenario#lowerBound} in ms
 * @param lockRequestsPerMember median lock requests (all but bindings and watches) per member
 * @param getsPerMember median GETs per member
 * @param patchesPerMember median PATCHes per member
 * @param bindingsPerMember median bindings per member
 * @param watchesPerRun median watch requests opened during a run
 * @param pluginLookupsPerMember median device-plugin pod-lookup requests per member (not part of
 *     the lock requests)
 * @param requestsByVerb median count per verb and resource per run (for the CSV)
 * @param exclusionViolations total mutual-exclusion violations over all repetitions
 */
public record ScenarioSummary(
    Scenario scenario,
    String algorithmKey,
    String algorithmLabel,
    boolean ours,
    List<Double> timesMs,
    int failedRuns,
    double lowerBoundMs,
    double lockRequestsPerMember,
    double getsPerMember,
    double patchesPerMember,
    double bindingsPerMember,
    double watchesPerRun,
    double pluginLookupsPerMember,
    Map<String, Double> requestsByVerb,
    int exclusionViolations) {

  /** Copies the collections. @throws NullPointerException if a component is null */
  public ScenarioSummary {
    Objects.requireNonNull(scenario, "scenario");
    Objects.requireNonNull(algorithmKey, "algorithmKey");
    Objects.requireNonNull(algorithmLabel, "algorithmLabel");
    timesMs = List.copyOf(timesMs);
    requestsByVerb = Map.copyOf(requestsByVerb);
  }

  /**
   * Summarises repetitions.
   *
   * @param runs its repetitions of one scenario; non-empty, all of the same scenario
   * @throws IllegalArgumentException if {@code runs} is empty
   */
  public static ScenarioSummary of(Algorithm algorithm, List<RunResult> runs, Duration hold) {
    checkArgument(!runs.isEmpty(), "runs must not be empty");
    Scenario s = runs.get(0).scenario();
    int n = s.gangSize();
    List<Double> times = new ArrayList<>();
    List<Double> lock = new ArrayList<>();
    List<Double> gets = new ArrayList<>();
    List<Double> patches = new ArrayList<>();
    List<Double> binds = new ArrayList<>();
    List<Double> watches = new ArrayList<>();
    List<Double> lookups = new ArrayList<>();
    Map<String, List<Double>> byVerb = new TreeMap<>();
    int failed = 0;
    int violations = 0;
    for (RunResult r : runs) {
      violations += r.exclusionViolations();
      if (!r.converged()) {
        failed++;
        continue;
      }
      times.add(r.convergenceNanos() / 1e6);
      RequestMix mix = RequestMix.of(r.requests());
      lock.add(mix.lockTotal() / (double) n);
      gets.add(mix.lockGets() / (double) n);
      patches.add(mix.lockPatches() / (double) n);
      binds.add(mix.bindings() / (double) n);
      watches.add((double) mix.watches());
      lookups.add(
          r.pluginLookupRequests().values().stream().mapToLong(Long::longValue).sum() / (double) n);
      for (Map.Entry<RequestKey, Long> e : r.requests().entrySet()) {
        byVerb
            .computeIfAbsent(e.getKey().toString(), k -> new ArrayList<>())
            .add(e.getValue().doubleValue());
      }
    }
    Map<String, Double> verbMedians = new TreeMap<>();
    byVerb.forEach((k, v) -> verbMedians.put(k, Stats.median(v)));
    return new ScenarioSummary(
        s,
        algorithm.key(),
        algorithm.label(),
        algorithm.ours(),
        times,
        failed,
        s.lowerBound(hold).toNanos() / 1e6,
        Stats.median(lock),
        Stats.median(gets),
        Stats.median(patches),
        Stats.median(binds),
        Stats.median(watches),
        Stats.median(lookups),
        verbMedians,
        violations);
  }

  /**
   * @return median convergence time in ms, NaN if no repetition converged
   */
  public double medianMs() {
    return Stats.median(timesMs);
  }

  /**
   * @return 90th percentile (nearest rank) in ms
   */
  public double p90Ms() {
    return Stats.percentile(timesMs, 90);
  }

  /**
   * @return fastest repetition in ms
   */
  public double minMs() {
    return Stats.min(timesMs);
  }

  /**
   * @return slowest repetition in ms
   */
  public double maxMs() {
    return Stats.max(timesMs);
  }

  /**
   * @return median divided by the lower bound
   */
  public double ratioToLowerBound() {
    return medianMs() / lowerBoundMs;
  }
}
