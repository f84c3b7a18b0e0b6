package dev.hamilock.examples.gang.real;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one scenario run on the real control plane showed.
 *
 * @param scenario the scenario's name
 * @param mode the extender's mode
 * @param pods the number of pods
 * @param firstBoundMs from creating the first pod to the first one having {@code spec.nodeName}
 *     (for a gang: about when the gang left Permit; -1: none bound)
 * @param boundMs from creating the first pod to the last one having {@code spec.nodeName} (-1: not
 *     all bound)
 * @param runningMs from creating the first pod to the last one Running (the device plugin's
 *     hand-off done; -1: not all)
 * @param placement pods per node
 * @param extenderCalls kube-scheduler's HTTP calls to the extender by path ({@code /filter}, {@code
 *     /bind})
 * @param nodePatches node PATCH requests the API server counted during the run (lock acquire and
 *     release: the extender's and the device plugins')
 * @param nodeGets node GET requests the API server counted during the run
 * @param bindings {@code pods/binding} creations the API server counted (only the extender binds)
 * @param violations what the verification found wrong (empty: every pod bound by the scheduler
 *     through the extender with HAMi's allocation, handed off by its node's device plugin, no card
 *     over its registered memory, cores or slots)
 * @param locksLeft nodes still carrying {@code hami.io/mutex.lock} after the run
 */
public record ScenarioRun(
    String scenario,
    ExtenderMode mode,
    int pods,
    long firstBoundMs,
    long boundMs,
    long runningMs,
    Map<String, Long> placement,
    Map<String, Long> extenderCalls,
    long nodePatches,
    long nodeGets,
    long bindings,
    List<String> violations,
    List<String> locksLeft) {

  /** Validates and copies. */
  public ScenarioRun {
    Objects.requireNonNull(scenario, "scenario");
    Objects.requireNonNull(mode, "mode");
    placement = Map.copyOf(placement);
    extenderCalls = Map.copyOf(extenderCalls);
    violations = List.copyOf(violations);
    locksLeft = List.copyOf(locksLeft);
  }

  /**
   * @return every pod bound and Running, nothing violated, no lock left
   */
  public boolean ok() {
    return runningMs >= 0 && violations.isEmpty() && locksLeft.isEmpty();
  }

  /**
   * @return node PATCH requests per pod
   */
  public double patchesPerPod() {
    return (double) nodePatches / pods;
  }

  /**
   * @return node GET requests per pod
   */
  public double getsPerPod() {
    return (double) nodeGets / pods;
  }

  /**
   * @return kube-scheduler's calls to the extender, all paths
   */
  public long extenderCallsTotal() {
    return extenderCalls.values().stream().mapToLong(Long::longValue).sum();
  }
}
