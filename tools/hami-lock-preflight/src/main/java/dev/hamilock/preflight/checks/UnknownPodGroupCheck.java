package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.YamlPath;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodGroup;
import dev.hamilock.preflight.model.PodTemplate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * PF08 {@code unknown-pod-group}: when PodGroups are given, a pod naming a group (label {@code
 * scheduling.x-k8s.io/pod-group}, or {@code spec.schedulingGroup.podGroupName} for the native
 * group) that is not among them in a compatible namespace is reported — usually a typo; the pod
 * then waits for (or bypasses) a group that does not exist. Severity ERROR.
 */
public final class UnknownPodGroupCheck extends AbstractCheck {

  /** Creates the check. */
  public UnknownPodGroupCheck() {
    super(
        "PF08",
        "unknown-pod-group",
        "A pod names a PodGroup that is not in the files (when PodGroups were given).");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    if (model.podGroups().isEmpty()) {
      return List.of();
    }
    List<Finding> out = new ArrayList<>();
    for (PodTemplate t : model.podTemplates()) {
      check(
          model,
          t,
          t.podGroupLabel(),
          PodGroup.SCHEDULER_PLUGINS_GROUP,
          YamlPath.key("metadata.labels", PodTemplate.POD_GROUP_LABEL),
          out);
      check(
          model,
          t,
          t.schedulingGroup(),
          PodGroup.NATIVE_GROUP,
          "spec.schedulingGroup.podGroupName",
          out);
    }
    return out;
  }

  private void check(
      ManifestModel model,
      PodTemplate t,
      Optional<String> group,
      String apiGroup,
      String path,
      List<Finding> out) {
    if (group.isEmpty()) {
      return;
    }
    String name = group.get();
    List<PodGroup> candidates =
        model.podGroups().stream().filter(g -> g.apiGroup().equals(apiGroup)).toList();
    if (candidates.stream()
        .anyMatch(g -> g.name().equals(name) && g.sameNamespace(t.namespace()))) {
      return;
    }
    List<String> known =
        candidates.stream()
            .map(g -> g.namespace().map(ns -> ns + "/").orElse("") + g.name())
            .toList();
    out.add(
        finding(
            Severity.ERROR,
            t.location(path),
            t.describe()
                + " names PodGroup \""
                + name
                + "\""
                + t.namespace().map(ns -> " in namespace " + ns).orElse("")
                + ", which is not among the "
                + apiGroup
                + " PodGroups given"
                + (known.isEmpty() ? " (none)" : " (" + String.join(", ", known) + ")")
                + ": the pods wait for a group that does not exist or skip gang scheduling.",
            known.isEmpty()
                ? "Create the " + apiGroup + " PodGroup \"" + name + "\" in the pods' namespace."
                : "Correct the name to one of "
                    + String.join(", ", known)
                    + ", or create PodGroup \""
                    + name
                    + "\"."));
  }
}
