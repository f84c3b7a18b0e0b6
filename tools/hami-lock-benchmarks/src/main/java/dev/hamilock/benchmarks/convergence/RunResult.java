package dev.hamilock.benchmarks.convergence;

import dev.hamilock.testkit.RequestKey;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One repetition of one scenario with one algorithm.
 *
 * @param algorithmKey {@link Algorithm#key()}
 * @param convergenceNanos time from the gang release to the last member bound and handed off (its
 *     plugin hold finished and the lock released)
 * @param bound members whose binding succeeded
 * @param requests API requests by verb and resource during the run (emulator counters), without the
 *     plugin lookups
 * @param pluginLookupRequests the device plugins' pod-lookup requests during the run, by verb and
 *     resource (counted on the plugin's lookup client; not part of {@code requests})
 * @param exclusionViolations times two members held one node's lock at once (must be 0)
 * @param failure the first member error, if any (the run then did not converge)
 */
public record RunResult(
    Scenario scenario,
    String algorithmKey,
    long convergenceNanos,
    int bound,
    Map<RequestKey, Long> requests,
    Map<RequestKey, Long> pluginLookupRequests,
    int exclusionViolations,
    Optional<String> failure) {

  /** Copies the map. @throws NullPointerException if a component is null */
  public RunResult {
    Objects.requireNonNull(scenario, "scenario");
    Objects.requireNonNull(algorithmKey, "algorithmKey");
    Objects.requireNonNull(failure, "failure");
    requests = Map.copyOf(requests);
    pluginLookupRequests = Map.copyOf(pluginLookupRequests);
  }

  /**
   * @return whether every member was bound and handed off without error
   */
  public boolean converged() {
    return failure.isEmpty() && bound == scenario.gangSize();
  }
}
