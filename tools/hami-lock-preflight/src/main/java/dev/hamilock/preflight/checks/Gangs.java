package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodGroup;
import dev.hamilock.preflight.model.PodTemplate;
import dev.hamilock.preflight.model.SchedulerProfile;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** Shared gang vocabulary for the standard checks. */
final class Gangs {

  static final String COSCHEDULING = "Coscheduling";
  static final String PRIORITY_SORT = "PrioritySort";
  static final String MULTI_POINT = "multiPoint";
  static final String QUEUE_SORT = "queueSort";
  static final String PODGROUPS = "podgroups";
  static final String HAMI_SCHEDULER = "hami-scheduler";

  private Gangs() {}

  /** Profiles (of every configuration) that enable Coscheduling anywhere. */
  static List<SchedulerProfile> coschedulingProfiles(ManifestModel model) {
    return model.schedulerConfigurations().stream()
        .flatMap(c -> c.profiles().stream())
        .filter(p -> p.enables(COSCHEDULING))
        .toList();
  }

  static Set<String> names(Collection<SchedulerProfile> profiles) {
    return profiles.stream()
        .map(SchedulerProfile::schedulerName)
        .collect(Collectors.toCollection(LinkedHashSet::new));
  }

  /** Whether any gang (a PodGroup, or a pod that HAMi treats as a gang member) is in the input. */
  static boolean gangsPresent(ManifestModel model) {
    return !model.podGroups().isEmpty()
        || model.podTemplates().stream().anyMatch(PodTemplate::isGangMember);
  }

  /** The group a template joins, within the API group that membership mechanism addresses. */
  static Optional<String> groupOf(PodTemplate t, PodGroup g) {
    return g.isCoscheduling() ? t.podGroupLabel() : t.schedulingGroup();
  }

  static boolean isMemberOf(PodTemplate t, PodGroup g) {
    return groupOf(t, g).filter(g.name()::equals).isPresent() && g.sameNamespace(t.namespace());
  }

  static String quoted(Collection<String> names) {
    return names.stream().distinct().map(n -> "\"" + n + "\"").collect(Collectors.joining(", "));
  }

  /** Path of a template's owner object relative to the document (strips the template suffix). */
  static String ownerPath(PodTemplate t) {
    String p = t.templatePath();
    for (String suffix : List.of("spec.jobTemplate.spec.template", "spec.template", "template")) {
      if (p.equals(suffix)) {
        return "";
      }
      if (p.endsWith("." + suffix)) {
        return p.substring(0, p.length() - suffix.length() - 1);
      }
    }
    return p;
  }
}
