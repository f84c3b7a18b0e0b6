package dev.hamilock.doctor;

import java.util.List;
import java.util.Optional;

/**
 * What {@code preempt NS/POD} planned (a dry run: nothing is evicted).
 *
 * @param preemptor {@code namespace/name} of the pending pod
 * @param priority its {@code spec.priority} (0 when unset, as kube-scheduler)
 * @param preemptionPolicy its {@code spec.preemptionPolicy} ({@code PreemptLowerPriority} when
 *     unset); with {@code Never} kube-scheduler would not preempt for it
 * @param bestNode the node kube-scheduler's order picks, empty when no node has a plan
 * @param nodes every HAMi node's plan, in the order the API listed the nodes
 * @param pdbsRead whether {@code policy/v1} PodDisruptionBudgets were read (else every victim is
 *     counted as not violating one)
 */
public record PreemptEntry(
    String preemptor,
    int priority,
    String preemptionPolicy,
    Optional<String> bestNode,
    List<NodeOutcome> nodes,
    boolean pdbsRead) {

  /** Copies the list. */
  public PreemptEntry {
    nodes = List.copyOf(nodes);
  }

  /**
   * One node's plan.
   *
   * @param node node name
   * @param outcome {@code FITS} (fits as it is), {@code PREEMPT} or {@code NONE}
   * @param victims for {@code PREEMPT}, the pods to evict, most important first
   * @param pdbViolations victims a PodDisruptionBudget does not allow to evict
   * @param reason for {@code NONE}, why (the fit's reason with every lower-priority pod gone)
   */
  public record NodeOutcome(
      String node, String outcome, List<Victim> victims, int pdbViolations, String reason) {
    /** Copies the list. */
    public NodeOutcome {
      victims = List.copyOf(victims);
    }
  }

  /**
   * A pod the plan evicts.
   *
   * @param pod {@code namespace/name}
   * @param priority its priority
   * @param node the node it runs on (a gang member may run on another node than the plan's)
   * @param gang its pod group, empty for a lone pod
   */
  public record Victim(String pod, int priority, String node, Optional<String> gang) {}
}
