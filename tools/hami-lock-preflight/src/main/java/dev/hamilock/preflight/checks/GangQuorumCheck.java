package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodGroup;
import dev.hamilock.preflight.model.PodTemplate;
import java.util.ArrayList;
import java.util.List;

/**
 * PF06 {@code gang-below-min-member}: the member pods the files create (1 per Pod, {@code replicas}
 * per Deployment/StatefulSet/ReplicaSet, {@code min(parallelism, completions)} per Job) add up to
 * fewer than the PodGroup's {@code minMember} (or native {@code minCount}), so the group never
 * reaches quorum (Coscheduling: {@code cannot find enough sibling pods, current pods number: 3,
 * minMember of group: 5}). Members are matched by name within a compatible namespace (see {@link
 * PodGroup#sameNamespace}). Runs only when the input contains pods or pod templates; a member whose
 * pod count is unknown (DaemonSet, non-integer replicas) turns the result into an INFO. Severity
 * ERROR.
 */
public final class GangQuorumCheck extends AbstractCheck {

  /** Creates the check. */
  public GangQuorumCheck() {
    super(
        "PF06",
        "gang-below-min-member",
        "Fewer member pods (replicas, parallelism) than the PodGroup's minMember.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    if (model.podTemplates().isEmpty()) {
      return List.of();
    }
    List<Finding> out = new ArrayList<>();
    for (PodGroup g : model.podGroups()) {
      if (g.minMember().isEmpty() || g.minMember().getAsInt() <= 0) {
        continue;
      }
      int min = g.minMember().getAsInt();
      long total = 0;
      List<String> parts = new ArrayList<>();
      List<String> unknown = new ArrayList<>();
      for (PodTemplate t : model.podTemplates()) {
        if (!Gangs.isMemberOf(t, g)) {
          continue;
        }
        if (t.podCount().isEmpty()) {
          unknown.add(t.describe());
        } else {
          total += t.podCount().getAsInt();
          parts.add(t.describe() + ": " + t.podCount().getAsInt());
        }
      }
      if (total >= min) {
        continue;
      }
      String field = g.isCoscheduling() ? "minMember" : "minCount";
      if (!unknown.isEmpty()) {
        out.add(
            finding(
                Severity.INFO,
                g.minMemberLocation(),
                "PodGroup \""
                    + g.name()
                    + "\" needs "
                    + field
                    + " "
                    + min
                    + "; the files create "
                    + total
                    + " member pods plus an unknown number from "
                    + String.join(", ", unknown)
                    + ".",
                "Make sure at least " + min + " member pods run at once."));
        continue;
      }
      out.add(
          finding(
              Severity.ERROR,
              g.minMemberLocation(),
              "PodGroup \""
                  + g.name()
                  + "\" needs "
                  + field
                  + " "
                  + min
                  + " but the files create "
                  + total
                  + " member pod(s)"
                  + (parts.isEmpty() ? "" : " (" + String.join(", ", parts) + ")")
                  + ": the group never reaches quorum and stays Pending (cannot find enough sibling pods, current "
                  + "pods number: "
                  + total
                  + ", minMember of group: "
                  + min
                  + ").",
              "Create at least "
                  + min
                  + " member pods (raise replicas/parallelism, or add pods labelled "
                  + PodTemplate.POD_GROUP_LABEL
                  + ": "
                  + g.name()
                  + "), or lower "
                  + field
                  + " to "
                  + Math.max(total, 1)
                  + "."));
    }
    return out;
  }
}
