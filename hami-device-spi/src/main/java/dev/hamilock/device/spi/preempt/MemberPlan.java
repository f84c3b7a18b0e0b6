package dev.hamilock.device.spi.preempt;

import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.view.PodView;
import java.util.Objects;

/**
 * Where one pending gang member goes in a {@link PreemptionPlanner#planGang gang plan}.
 *
 * @param plan its node, {@link NodePlan.Outcome#FITS} or {@link NodePlan.Outcome#PREEMPT} (victims
 *     not chosen for an earlier member)
 * @param fit its fit there with the plan's victims so far gone and the earlier members counted: the
 *     cards to reserve (memory in MiB, cores in % of a card); {@link NodeFit#fits()} is true
 */
public record MemberPlan(PodView pod, NodePlan plan, NodeFit fit) {
  public MemberPlan {
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(plan, "plan");
    Objects.requireNonNull(fit, "fit");
  }
}
