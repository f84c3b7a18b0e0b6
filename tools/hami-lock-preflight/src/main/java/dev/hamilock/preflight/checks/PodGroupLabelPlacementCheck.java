package dev.hamilock.preflight.checks;

import static dev.hamilock.preflight.model.PodTemplate.POD_GROUP_LABEL;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.YamlPath;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodTemplate;
import java.util.ArrayList;
import java.util.List;

/**
 * PF05 {@code pod-group-label-placement}: the {@code scheduling.x-k8s.io/pod-group} key must be a
 * <em>label</em> of the <em>pod</em>. Reported:
 *
 * <ul>
 *   <li>ERROR: it is under the pod's {@code metadata.annotations} (and not its labels) — neither
 *       Coscheduling nor HAMi's {@code IsPodGroupMember} reads annotations, so all gang logic is
 *       silently bypassed and pods schedule one by one;
 *   <li>ERROR: it is a label of the workload object (Deployment, Job, ...) but not of its pod
 *       template — workload labels are not copied to the pods;
 *   <li>WARNING: the pod label is present with an empty value — not a member for either.
 * </ul>
 */
public final class PodGroupLabelPlacementCheck extends AbstractCheck {

  /** Creates the check. */
  public PodGroupLabelPlacementCheck() {
    super(
        "PF05",
        "pod-group-label-placement",
        "scheduling.x-k8s.io/pod-group must be a label of the pod, not an annotation or a workload label.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<Finding> out = new ArrayList<>();
    for (PodTemplate t : model.podTemplates()) {
      boolean hasLabel = t.labels().containsKey(POD_GROUP_LABEL);
      if (hasLabel && t.labels().get(POD_GROUP_LABEL).isEmpty()) {
        out.add(
            finding(
                Severity.WARNING,
                t.location(YamlPath.key("metadata.labels", POD_GROUP_LABEL)),
                t.describe()
                    + " has an empty "
                    + POD_GROUP_LABEL
                    + " label: neither Coscheduling nor HAMi treats "
                    + "its pods as gang members.",
                "Set the label to the PodGroup's name, or remove it."));
      }
      if (hasLabel) {
        continue;
      }
      String annotation = t.annotations().get(POD_GROUP_LABEL);
      if (annotation != null) {
        out.add(
            finding(
                Severity.ERROR,
                t.location(YamlPath.key("metadata.annotations", POD_GROUP_LABEL)),
                t.describe()
                    + " names PodGroup \""
                    + annotation
                    + "\" in metadata.annotations; Coscheduling and "
                    + "HAMi read only the label, so all gang logic is silently bypassed and the pods schedule one by one.",
                "Move "
                    + POD_GROUP_LABEL
                    + ": "
                    + annotation
                    + " from metadata.annotations to metadata.labels"
                    + (t.kind().equals("Pod") ? "." : " of the pod template.")));
      }
      String ownerLabel = t.ownerLabels().get(POD_GROUP_LABEL);
      if (ownerLabel != null) {
        out.add(
            finding(
                Severity.ERROR,
                t.document()
                    .location(
                        YamlPath.key(
                            YamlPath.join(Gangs.ownerPath(t), "metadata.labels"), POD_GROUP_LABEL)),
                t.describe()
                    + " carries the "
                    + POD_GROUP_LABEL
                    + " label on the "
                    + t.kind()
                    + " itself, which is "
                    + "not copied to its pods: the pods are not gang members and schedule one by one.",
                "Put "
                    + POD_GROUP_LABEL
                    + ": "
                    + ownerLabel
                    + " under the pod template's metadata.labels ("
                    + t.templatePath()
                    + ".metadata.labels)."));
      }
    }
    return out;
  }
}
