package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Values;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.ManifestObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * PF13 {@code dra-class-serves-hami-resource}: a {@code resource.k8s.io} DeviceClass whose {@code
 * spec.extendedResourceName} (k8s.io/api {@code resource/v1/types.go} {@code
 * DeviceClassSpec.ExtendedResourceName}) is a resource name the HAMi extender serves ({@link
 * Dra#servedNames}). kube-scheduler then satisfies a pod's {@code nvidia.com/gpu} through a
 * ResourceClaim of this class on every node whose allocatable {@code nvidia.com/gpu} is 0 — also a
 * HAMi node whose device plugin is unhealthy — and kubelet skips the device plugin for it
 * (KEP-5004, {@code DRAExtendedResource}). The DRA allocator and HAMi then each hand out the same
 * cards without seeing the other's allocations: GPUs counted twice on dual-mode nodes
 * (kai-scheduler/KAI-Scheduler #1177; HAMi's FAQ, Project-HAMi/HAMi#646: one GPU manager per node).
 * NVIDIA's DRA driver chart writes {@code extendedResourceName: nvidia.com/gpu} on its {@code
 * gpu.nvidia.com} class whenever it renders {@code resource.k8s.io/v1} (NVIDIA/k8s-dra-driver-gpu
 * {@code deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml}). Severity ERROR.
 */
public final class DraClassServesHamiResourceCheck extends AbstractCheck {

  /** Creates the check. */
  public DraClassServesHamiResourceCheck() {
    super(
        "PF13",
        "dra-class-serves-hami-resource",
        "No DeviceClass may map (extendedResourceName) a resource name the HAMi extender serves.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    Set<String> served = Dra.servedNames(model);
    List<Finding> out = new ArrayList<>();
    for (ManifestObject c : model.objects(Dra.GROUP, "DeviceClass")) {
      Optional<String> name = Values.string(Values.at(c.root(), "spec", "extendedResourceName"));
      if (name.isEmpty() || !served.contains(name.get())) {
        continue;
      }
      out.add(
          finding(
              Severity.ERROR,
              c.location("spec.extendedResourceName"),
              c.describe()
                  + " maps extended resource "
                  + name.get()
                  + ", which the HAMi extender serves: kube-scheduler gives a pod asking "
                  + name.get()
                  + " a ResourceClaim of this class on any node whose allocatable "
                  + name.get()
                  + " is 0 (also a HAMi node whose device plugin is unhealthy) and kubelet skips"
                  + " HAMi's device plugin, so the DRA allocator and HAMi allocate the same cards"
                  + " without seeing each other's allocations (KAI-Scheduler#1177, HAMi#646).",
              "Remove spec.extendedResourceName from "
                  + c.describe()
                  + " (pods then reach DRA only through explicit ResourceClaims), or run the DRA"
                  + " driver only on nodes without HAMi's device plugin; never both on one node."));
    }
    return out;
  }
}
