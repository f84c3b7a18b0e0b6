package dev.hamilock.device.spi.preempt;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * @param candidates the {@link NodePlan.Outcome#PREEMPT} nodes, best first in kube-scheduler's
 *     {@code pickOneNodeForPreemption} order ({@link PreemptionPlanner})
 * @param byNode every node's plan, by node name, in the order the nodes were given
 */
public record PreemptionPlan(List<NodePlan> candidates, Map<String, NodePlan> byNode) {
  public PreemptionPlan {
    candidates = List.copyOf(candidates);
    byNode = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(byNode));
  }

  /** The node kube-scheduler would pick, empty when no node has a plan. */
  public Optional<NodePlan> best() {
    return candidates.stream().findFirst();
  }
}
