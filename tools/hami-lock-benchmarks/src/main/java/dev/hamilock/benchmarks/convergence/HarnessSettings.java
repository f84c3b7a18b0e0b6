package dev.hamilock.benchmarks.convergence;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How the gang-convergence harness runs.
 *
 * @param hold the device plugin's {@code Allocate} hold between bind and lock release (20 ms)
 * @param repetitions repetitions per scenario and algorithm (≥ 5 for published figures)
 * @param backoffScale divisor of kube-scheduler's backoff for {@link FailFastBackoffAlgorithm} (10)
 * @param retryTimeout gang members' retry timeout (HAMi's {@code --node-lock-retry-timeout}, 28 s)
 * @param runTimeout a run that has not converged after this is recorded as failed
 * @param warmupRequests API requests each algorithm makes on uncontended lock cycles before
 *     measuring (kube-api-notes §3: ≥ 3000 operations to leave the cold-JVM regime)
 * @param scenarios the scenarios to run
 */
public record HarnessSettings(
    Duration hold,
    int repetitions,
    double backoffScale,
    Duration retryTimeout,
    Duration runTimeout,
    int warmupRequests,
    List<Scenario> scenarios) {

  /**
   * Validates and copies.
   *
   * @throws IllegalArgumentException naming the value if a duration is not positive, repetitions
   *     are below 1, the scale below 1, warm-up negative or no scenarios
   */
  public HarnessSettings {
    for (Duration d : new Duration[] {hold, retryTimeout, runTimeout}) {
      Objects.requireNonNull(d, "durations must not be null");
      checkArgument(!d.isNegative() && !d.isZero(), "durations must be positive, got %s", d);
    }
    checkArgument(repetitions >= 1, "repetitions must be at least 1, got %s", repetitions);
    checkArgument(backoffScale >= 1, "backoffScale must be at least 1, got %s", backoffScale);
    checkArgument(
        warmupRequests >= 0, "warmupRequests must not be negative, got %s", warmupRequests);
    scenarios = List.copyOf(scenarios);
    checkArgument(!scenarios.isEmpty(), "scenarios must not be empty");
  }

  /**
   * The published configuration: hold 20 ms, 5 repetitions, backoff ÷10, retry timeout 28 s, run
   * timeout 60 s, 3000 warm-up requests, the full {@link Scenario#matrix()}.
   */
  public static HarnessSettings defaults() {
    return new HarnessSettings(
        Duration.ofMillis(20),
        5,
        10,
        Duration.ofSeconds(28),
        Duration.ofSeconds(60),
        3000,
        Scenario.matrix());
  }
}
