package dev.hamilock.examples.gang.real;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one run of {@link PreemptionScenario} showed.
 *
 * @param pendingStatus without {@code --gpu-preemption}: the message of the preemptor's {@code
 *     PodScheduled} condition as kube-scheduler wrote it (empty: not reached)
 * @param victims with it: the low-priority pods evicted, in creation order
 * @param runningMs with it: from creating the preemptor to it Running (-1: not reached)
 * @param evictions {@code pods/eviction} creations the API server counted with the flag on, refused
 *     ones included
 * @param podPatches pod PATCH requests with the flag on (the extender's reservation and bind
 *     writes, the device plugin's hand-off)
 * @param events Event creations with the flag on
 * @param extenderCalls kube-scheduler's HTTP calls to the extender with the flag on, by path
 * @param violations what the verification found wrong (empty: as {@link PreemptionScenario} says)
 * @param loadAverage the machine's 1-minute load average when the run started (negative where the
 *     platform has none)
 * @param gangVictims the gang half (node-q, with the flag): the low-priority pods evicted for the
 *     gang of two, in creation order
 * @param gangRunningMs from creating the gang's PodGroup to both members Running (-1: not reached)
 * @param gangEvictions {@code pods/eviction} creations counted during the gang half
 * @param gangPendingStatus the first {@code PodScheduled} condition kube-scheduler wrote on a gang
 *     member, as {@code reason: message} (empty: none seen before both were bound)
 */
public record PreemptionRun(
    String pendingStatus,
    List<String> victims,
    long runningMs,
    long evictions,
    long podPatches,
    long events,
    Map<String, Long> extenderCalls,
    List<String> violations,
    double loadAverage,
    List<String> gangVictims,
    long gangRunningMs,
    long gangEvictions,
    String gangPendingStatus) {

  /** Validates and copies. */
  public PreemptionRun {
    Objects.requireNonNull(pendingStatus, "pendingStatus");
    victims = List.copyOf(victims);
    extenderCalls = Map.copyOf(extenderCalls);
    violations = List.copyOf(violations);
    gangVictims = List.copyOf(gangVictims);
    Objects.requireNonNull(gangPendingStatus, "gangPendingStatus");
  }

  /**
   * @return the preemptor and both gang members Running with the flag on and nothing violated
   */
  public boolean ok() {
    return runningMs >= 0 && gangRunningMs >= 0 && violations.isEmpty();
  }
}
