package dev.hamilock.examples.gang.real;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

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
 * @param nodes each pod's node by the pod's name in the scenario ({@link
 *     Scenario.ScenarioPod#name()}), {@code -} for a pod left unbound
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
 * @param handoffMs median, over the run's hand-offs, of the time from a device plugin's release of
 *     its node's lock (the release PATCH answered) to its next sight of a pod bound to the node
 *     waiting for it (woken by the harness's pod watch, {@link PodWatch}); the hand-off chain of
 *     issue 25 item 2 plus the watch's delivery; -1 when no node had two pods
 * @param loadAverage the machine's load average over the last minute when the run started ({@link
 *     java.lang.management.OperatingSystemMXBean#getSystemLoadAverage()}, what {@code uptime}
 *     prints first; negative where the platform has none)
 */
public record ScenarioRun(
    String scenario,
    ExtenderMode mode,
    int pods,
    long firstBoundMs,
    long boundMs,
    long runningMs,
    Map<String, String> nodes,
    Map<String, Long> extenderCalls,
    long nodePatches,
    long nodeGets,
    long bindings,
    List<String> violations,
    List<String> locksLeft,
    long handoffMs,
    double loadAverage) {

  /** Validates and copies. */
  public ScenarioRun {
    Objects.requireNonNull(scenario, "scenario");
    Objects.requireNonNull(mode, "mode");
    nodes = Map.copyOf(nodes);
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
   * @return pods per node ({@code -}: unbound), sorted by node name
   */
  public Map<String, Long> placement() {
    Map<String, Long> out = new TreeMap<>();
    nodes.values().forEach(n -> out.merge(n, 1L, Long::sum));
    return out;
  }

  /**
   * The control plane's floor for this placement, from a {@link ExtenderMode#FLOOR} run: its time
   * to all Running plus {@code (pods on the busiest node - 1) × }{@link
   * RealSchedulerCluster#ALLOCATE_MS}, the serial part any per-node lock held across the device
   * plugin's Allocate adds (HAMi's lock is released by the device plugin after Allocate, so the
   * pods of one node hold it one after another, each at least that long).
   *
   * @return the floor in ms, or -1 when not every pod became Running
   * @throws IllegalStateException when this is not a floor run
   */
  public long floorMs() {
    if (mode != ExtenderMode.FLOOR) {
      throw new IllegalStateException(scenario + " " + mode.label() + " is not a floor run");
    }
    return runningMs < 0
        ? -1
        : runningMs + (busiestNodePods() - 1) * RealSchedulerCluster.ALLOCATE_MS;
  }

  /**
   * @return the number of pods on the node with the most of them
   */
  public long busiestNodePods() {
    return placement().values().stream().mapToLong(Long::longValue).max().orElse(0);
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
