package dev.hamilock.device.spi.preempt;

import java.util.List;
import java.util.Objects;

/**
 * What preemption can do for the preemptor on one node.
 *
 * @param victims for {@link Outcome#PREEMPT}: the pods to evict, most important first
 *     (kube-scheduler {@code MoreImportantVictim}), a gang's members together, also those on other
 *     nodes; empty otherwise
 * @param pdbViolations victims whose eviction a {@link DisruptionBudget} does not allow
 *     (kube-scheduler {@code NumPDBViolations})
 * @param reason for {@link Outcome#NONE}: why, e.g. the fit's {@code 1/2 CardInsufficientMemory}
 *     with every lower-priority pod gone, or {@code No preemption victims found for incoming pod};
 *     "" otherwise
 */
public record NodePlan(
    String node, Outcome outcome, List<RunningPod> victims, int pdbViolations, String reason) {

  public enum Outcome {
    /** The preemptor fits as the node is: no victims (kube-scheduler makes no candidate of it). */
    FITS,
    /** The preemptor fits once {@link #victims()} are gone. */
    PREEMPT,
    /** The preemptor does not fit even with every lower-priority pod gone. */
    NONE
  }

  public NodePlan {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(outcome, "outcome");
    victims = List.copyOf(victims);
    Objects.requireNonNull(reason, "reason");
  }
}
