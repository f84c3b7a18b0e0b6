package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.YamlPath;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodTemplate;
import java.util.ArrayList;
import java.util.List;

/**
 * PF12 {@code gpu-resource-annotation}: a HAMi device resource ({@code nvidia.com/gpu}, {@code
 * gpumem}, {@code gpumem-percentage}, {@code gpucores}) written as a key of the pod's {@code
 * metadata.annotations}. HAMi reads these only from a container's {@code resources.limits}; the
 * annotation is silently ignored and the pod is granted the whole card, and the mistake surfaces
 * only when a second pod is refused the same GPU with {@code CardInsufficientMemory}
 * (Project-HAMi/HAMi#2862, HAMi 2.10.0). Severity ERROR.
 */
public final class GpuResourceAnnotationCheck extends AbstractCheck {

  /** Creates the check. */
  public GpuResourceAnnotationCheck() {
    super(
        "PF12",
        "gpu-resource-annotation",
        "nvidia.com/gpu* resources must be container resources.limits, not pod annotations.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<Finding> out = new ArrayList<>();
    for (PodTemplate t : model.podTemplates()) {
      for (String resource : GpuResources.ALL) {
        String value = t.annotations().get(resource);
        if (value == null) {
          continue;
        }
        out.add(
            finding(
                Severity.ERROR,
                t.location(YamlPath.key("metadata.annotations", resource)),
                t.describe()
                    + " gives "
                    + resource
                    + ": \""
                    + value
                    + "\" as a pod annotation: HAMi reads device resources only from container"
                    + " resources.limits, so the annotation is silently ignored and the pod gets a whole"
                    + " card (HAMi#2862).",
                "Move "
                    + resource
                    + ": \""
                    + value
                    + "\" from metadata.annotations to spec.containers[*].resources.limits of the"
                    + " container that uses the GPU."));
      }
    }
    return out;
  }
}
