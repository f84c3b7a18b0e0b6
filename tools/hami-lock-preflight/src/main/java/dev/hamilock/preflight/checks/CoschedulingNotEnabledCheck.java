package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodGroup;
import dev.hamilock.preflight.model.PodTemplate;
import dev.hamilock.preflight.model.SchedulerConfiguration;
import dev.hamilock.preflight.model.SchedulerProfile;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * PF02 {@code coscheduling-not-enabled}: scheduler-plugins PodGroups are given, but the profile
 * whose {@code schedulerName} the members use does not enable Coscheduling, so {@code minMember} is
 * never enforced and members are scheduled one by one. When no member is given, every profile of
 * the configuration is considered; when the members' scheduler name matches no profile and no
 * profile enables Coscheduling, the configuration itself is reported. Needs at least one
 * KubeSchedulerConfiguration in the input. Severity ERROR.
 */
public final class CoschedulingNotEnabledCheck extends AbstractCheck {

  /** Creates the check. */
  public CoschedulingNotEnabledCheck() {
    super(
        "PF02",
        "coscheduling-not-enabled",
        "PodGroups present but Coscheduling not enabled in the profile the pods use.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<String> groups =
        model.podGroups().stream().filter(PodGroup::isCoscheduling).map(PodGroup::name).toList();
    if (groups.isEmpty()) {
      return List.of();
    }
    Set<String> used = new LinkedHashSet<>();
    for (PodTemplate t : model.podTemplates()) {
      if (t.podGroupLabel().isPresent()) {
        used.add(t.effectiveSchedulerName());
      }
    }
    String fix =
        "Enable the plugin in that profile: plugins: {multiPoint: {enabled: [{name: Coscheduling}]}, "
            + "queueSort: {disabled: [{name: PrioritySort}]}}, and run a kube-scheduler image that contains "
            + "scheduler-plugins (the stock kube-scheduler has no Coscheduling).";
    List<Finding> out = new ArrayList<>();
    for (SchedulerConfiguration cfg : model.schedulerConfigurations()) {
      boolean matched = false;
      for (SchedulerProfile p : cfg.profiles()) {
        if (!used.isEmpty() && !used.contains(p.schedulerName())) {
          continue;
        }
        matched = true;
        if (!p.enables(Gangs.COSCHEDULING)) {
          out.add(
              finding(
                  Severity.ERROR,
                  p.location(p.plugins().isEmpty() ? "" : "plugins"),
                  "PodGroup(s) "
                      + Gangs.quoted(groups)
                      + " are given but profile \""
                      + p.schedulerName()
                      + "\" does not enable the Coscheduling plugin: minMember is never enforced and the "
                      + "members are scheduled one by one.",
                  fix));
        }
      }
      if (!matched && cfg.profiles().stream().noneMatch(p -> p.enables(Gangs.COSCHEDULING))) {
        out.add(
            finding(
                Severity.ERROR,
                cfg.location(),
                "PodGroup(s) "
                    + Gangs.quoted(groups)
                    + " are given but no profile of this KubeSchedulerConfiguration "
                    + "enables the Coscheduling plugin (the members use scheduler "
                    + Gangs.quoted(used)
                    + ").",
                fix));
      }
    }
    return out;
  }
}
