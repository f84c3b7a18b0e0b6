package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.PreflightCheck;
import java.util.List;

/**
 * The twelve checks for the Coscheduling + HAMi set-up guide's pitfalls, PF01…PF12, in id order.
 */
public final class StandardChecks {

  private StandardChecks() {}

  /**
   * @return new instances of PF01…PF12, in id order
   */
  public static List<PreflightCheck> all() {
    return List.of(
        new QueueSortConflictCheck(),
        new CoschedulingNotEnabledCheck(),
        new RetryTimeoutCheck(),
        new PodGroupRbacCheck(),
        new PodGroupLabelPlacementCheck(),
        new GangQuorumCheck(),
        new MemberSchedulerNameCheck(),
        new UnknownPodGroupCheck(),
        new MuslImageCheck(),
        new GpuResourceValuesCheck(),
        new ExtenderBindBypassCheck(),
        new GpuResourceAnnotationCheck());
  }
}
