package dev.hamilock.doctor;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@code preempt NS/POD} planned (a dry run: nothing is evicted).
 *
 * @param preemptor {@code namespace/name} of the pending pod
 * @param priority its {@code spec.priority} (0 when unset, as kube-scheduler); for a gang member
 *     its pending members' lowest
 * @param preemptionPolicy its {@code spec.preemptionPolicy} ({@code PreemptLowerPriority} when
 *     unset); with {@code Never} kube-scheduler would not preempt for it
 * @param bestNode the node kube-scheduler's order picks, empty when no node has a plan (and for a
 *     gang member)
 * @param nodes every HAMi node's plan, in the order the API listed the nodes (none for a gang
 *     member)
 * @param pdbsRead whether {@code policy/v1} PodDisruptionBudgets were read (else every victim is
 *     counted as not violating one)
 * @param gang for a gang member, its gang's plan
 */
public record PreemptEntry(
    String preemptor,
    int priority,
    String preemptionPolicy,
    Optional<String> bestNode,
    List<NodeOutcome> nodes,
    boolean pdbsRead,
    Optional<GangOutcome> gang) {

  /** Copies the list. */
  public PreemptEntry {
    nodes = List.copyOf(nodes);
    Objects.requireNonNull(gang, "gang");
  }

  /**
   * A gang member's plan: its gang's pending members planned together (the SPI's {@code
   * PreemptionPlanner.planGang}: all placed, or nobody evicted).
   *
   * @param name the pod group
   * @param members the pending members ({@code namespace/name}), the pod asked about first, each
   *     with the node the plan puts it on ("" when no plan places every member)
   * @param placed whether a plan places every member
   * @param victims the union of the members' victims, in the members' order
   * @param pdbViolations victims a PodDisruptionBudget does not allow to evict
   */
  public record GangOutcome(
      String name, List<Member> members, boolean placed, List<Victim> victims, int pdbViolations) {
    /** Copies the lists. */
    public GangOutcome {
      members = List.copyOf(members);
      victims = List.copyOf(victims);
    }
  }

  /**
   * A pending gang member and its node in the gang's plan.
   *
   * @param pod {@code namespace/name}
   * @param node the node the plan puts it on, "" when none
   */
  public record Member(String pod, String node) {}

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
