package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodTemplate;
import dev.hamilock.preflight.model.SchedulerProfile;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * PF07 {@code member-scheduler-name}: a gang member (pod-group label) whose {@code
 * spec.schedulerName} is not a profile running Coscheduling is scheduled by another scheduler,
 * without gang semantics. Needs a KubeSchedulerConfiguration with at least one Coscheduling profile
 * in the input (otherwise PF02 applies).
 *
 * <ul>
 *   <li>ERROR: an explicit other scheduler name, or an unset/{@code default-scheduler} name on a
 *       pod without HAMi resources;
 *   <li>WARNING: an unset/{@code default-scheduler} name on a pod with HAMi resources — it only
 *       works because HAMi's admission webhook rewrites the name to the HAMi scheduler, which
 *       depends on the webhook handling the pod.
 * </ul>
 */
public final class MemberSchedulerNameCheck extends AbstractCheck {

  /** Creates the check. */
  public MemberSchedulerNameCheck() {
    super(
        "PF07",
        "member-scheduler-name",
        "Gang members must use the profile that runs Coscheduling.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<SchedulerProfile> profiles = Gangs.coschedulingProfiles(model);
    if (profiles.isEmpty()) {
      return List.of();
    }
    Set<String> names = Gangs.names(profiles);
    String target = names.iterator().next();
    List<Finding> out = new ArrayList<>();
    for (PodTemplate t : model.podTemplates()) {
      if (t.podGroupLabel().isEmpty() || names.contains(t.effectiveSchedulerName())) {
        continue;
      }
      boolean defaulted =
          t.effectiveSchedulerName().equals(SchedulerProfile.DEFAULT_SCHEDULER_NAME);
      boolean hamiResources = t.containers().stream().anyMatch(GpuResources::requestsHami);
      String where = t.schedulerName().isPresent() ? "spec.schedulerName" : "spec";
      String fix =
          "Set spec.schedulerName: "
              + target
              + " in "
              + t.describe()
              + (t.kind().equals("Pod") ? "." : "'s pod template.");
      if (defaulted && hamiResources) {
        out.add(
            finding(
                Severity.WARNING,
                t.location(where),
                t.describe()
                    + " is a member of PodGroup \""
                    + t.podGroupLabel().get()
                    + "\" but uses scheduler \""
                    + t.effectiveSchedulerName()
                    + "\"; it reaches Coscheduling ("
                    + Gangs.quoted(names)
                    + ") only if HAMi's admission webhook rewrites the scheduler name, which depends on the "
                    + "webhook handling the pod.",
                fix));
      } else {
        out.add(
            finding(
                Severity.ERROR,
                t.location(where),
                t.describe()
                    + " is a member of PodGroup \""
                    + t.podGroupLabel().get()
                    + "\" but uses scheduler \""
                    + t.effectiveSchedulerName()
                    + "\", while Coscheduling runs only in profile(s) "
                    + Gangs.quoted(names)
                    + ": the pods are scheduled without gang semantics.",
                fix));
      }
    }
    return out;
  }
}
