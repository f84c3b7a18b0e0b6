package dev.hamilock.bind.testing;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.device.spi.view.NodeView;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything one {@link ScenarioRunner#run} observed.
 *
 * @param binds the bind result per pod name (pods the filter placed nowhere are absent)
 * @param unschedulable pod name to the filter's reason for pods placed nowhere
 * @param ledger what the simulated device plugins handed out
 * @param finalPods the pods after quiescence
 * @param finalNodes the nodes after quiescence
 * @param violations the property's violations ({@link BindInvariants#check})
 * @param lockRemovals the node locks another writer removed during binds ({@link
 *     Scenario.PodSpec#lockRemoval()}), in order; a {@linkplain
 *     Scenario.LockRemoval#SKEWED_TAKEOVER skewed takeover} is one too
 * @param skewedTakeovers the locks a skewed writer took over during binds, each with what it saw
 *     when it released its own ({@link Scenario.LockRemoval#SKEWED_TAKEOVER})
 */
public record RunReport(
    Scenario scenario,
    Map<String, BindResult> binds,
    Map<String, String> unschedulable,
    PhysicalLedger ledger,
    List<ClusterPod> finalPods,
    List<NodeView> finalNodes,
    List<BindInvariants.Violation> violations,
    List<LockRemovalEvent> lockRemovals,
    List<SkewedTakeoverEvent> skewedTakeovers) {

  /** Copies. */
  public RunReport {
    binds = Map.copyOf(binds);
    unschedulable = Map.copyOf(unschedulable);
    finalPods = List.copyOf(finalPods);
    finalNodes = List.copyOf(finalNodes);
    violations = List.copyOf(violations);
    lockRemovals = List.copyOf(lockRemovals);
    skewedTakeovers = List.copyOf(skewedTakeovers);
  }

  /**
   * One removal of a node lock by another writer while a pod's binder held it.
   *
   * @param pod the pod whose binder held the lock
   * @param moment when in the bind
   * @param removed the lock value removed (empty: no lock was stored then)
   */
  public record LockRemovalEvent(
      String pod, String node, Scenario.LockRemoval moment, Optional<String> removed) {}

  /**
   * A node lock taken over by a skewed writer while a pod's binder held it, and released by that
   * writer later.
   *
   * @param pod the pod whose binder held the lock
   * @param takeover what the writer replaced and wrote
   * @param seenAtRelease the value stored right before the writer released its lock
   */
  public record SkewedTakeoverEvent(
      String pod, ScenarioBackend.LockTakeover takeover, Optional<String> seenAtRelease) {

    /**
     * @return whether the writer's lock was still its own when it released it (true if it wrote
     *     none)
     */
    public boolean newHolderUntouched() {
      return takeover.written().isEmpty() || takeover.written().equals(seenAtRelease);
    }
  }

  /**
   * @param moment when in the bind
   * @return how many removals at that moment found a lock to remove
   */
  public long lockRemovals(Scenario.LockRemoval moment) {
    return lockRemovals.stream()
        .filter(e -> e.moment() == moment && e.removed().isPresent())
        .count();
  }

  /**
   * @return how many binds ended with each outcome
   */
  public Map<BindOutcome, Integer> outcomeCounts() {
    Map<BindOutcome, Integer> m = new EnumMap<>(BindOutcome.class);
    binds.values().forEach(b -> m.merge(b.outcome(), 1, Integer::sum));
    return m;
  }
}
