package dev.hamilock.device.spi.preempt;

import com.google.common.base.Preconditions;
import java.util.Objects;
import java.util.Set;

/**
 * A PodDisruptionBudget as plain data: the caller matches its selector (kube-scheduler skips a PDB
 * of another namespace, with an empty selector, or that lists the pod in {@code
 * status.disruptedPods}: {@code pkg/scheduler/framework/preemption/util.go}
 * FilterVictimsWithPDBViolation) and lists the pods it protects.
 *
 * @param protectedPods {@code namespace/name} of every pod the budget protects
 * @param disruptionsAllowed {@code status.disruptionsAllowed}, &ge; 0
 */
public record DisruptionBudget(String name, Set<String> protectedPods, int disruptionsAllowed) {
  /**
   * @throws IllegalArgumentException naming a negative {@code disruptionsAllowed}
   */
  public DisruptionBudget {
    Objects.requireNonNull(name, "name");
    protectedPods = Set.copyOf(protectedPods);
    Preconditions.checkArgument(
        disruptionsAllowed >= 0,
        "PodDisruptionBudget %s: disruptionsAllowed must be >= 0: %s",
        name,
        disruptionsAllowed);
  }
}
