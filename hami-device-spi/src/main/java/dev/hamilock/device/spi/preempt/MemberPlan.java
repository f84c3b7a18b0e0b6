package dev.hamilock.device.spi.preempt;

import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.view.PodView;
import java.util.Objects;

/**
 * Where one pending gang member goes in a {@link PreemptionPlanner#planGang gang plan}.
 *
 * @param plan its node: {@link NodePlan.Outcome#FITS} (no victims) or {@link
 *     NodePlan.Outcome#PREEMPT} (the victims chosen for it, none chosen for an earlier member)
 * @param fit the member's fit on that node once every victim of the gang plan so far is gone and
 *     the earlier members are counted there: the cards (memory in MiB, cores in % of a card) to
 *     reserve for it; {@link NodeFit#fits()} is true
 */
public record MemberPlan(PodView pod, NodePlan plan, NodeFit fit) {
  public MemberPlan {
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(plan, "plan");
    Objects.requireNonNull(fit, "fit");
  }
}
