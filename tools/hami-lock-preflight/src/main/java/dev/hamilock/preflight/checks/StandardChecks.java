package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.PreflightCheck;
import java.util.List;

/**
 * The standard checks, in id order: PF01…PF12 for the Coscheduling + HAMi set-up guide's pitfalls,
 * PF13…PF16 for the hazards of DRA beside HAMi.
 */
public final class StandardChecks {

  private StandardChecks() {}

  /**
   * @return new instances of PF01…PF16, in id order
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
        new GpuResourceAnnotationCheck(),
        new DraClassServesHamiResourceCheck(),
        new DraClassNameClashCheck(),
        new DraWebhookRewritesGpuPodsCheck(),
        new DraSharedDeviceCheck());
  }
}
