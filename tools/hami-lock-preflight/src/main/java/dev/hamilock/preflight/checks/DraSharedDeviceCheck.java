package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Values;
import dev.hamilock.preflight.manifest.YamlPath;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.ManifestObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * PF16 {@code dra-shared-device-on-hami-node}: a ResourceSlice ({@code spec.nodeName}) publishing
 * devices with {@code allowMultipleAllocations: true} (k8s.io/api {@code resource/v1/types.go}) on
 * a node HAMi also shares: the DRA allocator and HAMi each place pods on the card without seeing
 * the other's share. HAMi's DRA driver publishes every card this way and HAMi-DRA's chart runs it
 * on the nodes labelled {@code gpu: "on"}, as HAMi's device plugin. ERROR when the Node given is a
 * HAMi node ({@link Dra#isHamiNode}); WARNING when no such Node is given or the slice has no {@code
 * nodeName}; nothing for a Node that is not a HAMi node.
 */
public final class DraSharedDeviceCheck extends AbstractCheck {

  /** Creates the check. */
  public DraSharedDeviceCheck() {
    super(
        "PF16",
        "dra-shared-device-on-hami-node",
        "No DRA device open to several allocations (allowMultipleAllocations) on a HAMi node.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<Finding> out = new ArrayList<>();
    for (ManifestObject slice : model.objects(Dra.GROUP, "ResourceSlice")) {
      List<Object> devices = Values.list(Values.at(slice.root(), "spec", "devices"));
      List<String> shared = new ArrayList<>();
      int first = -1;
      for (int i = 0; i < devices.size(); i++) {
        Object flag = Values.at(devices.get(i), "allowMultipleAllocations");
        if (Boolean.TRUE.equals(flag) || "true".equals(Values.scalarText(flag))) {
          shared.add(Values.string(Values.at(devices.get(i), "name")).orElse("#" + i));
          first = first < 0 ? i : first;
        }
      }
      if (shared.isEmpty()) {
        continue;
      }
      Optional<String> node = Values.string(Values.at(slice.root(), "spec", "nodeName"));
      Optional<Boolean> hami = node.flatMap(n -> Dra.isHamiNode(model, n));
      if (hami.isPresent() && !hami.get()) {
        continue;
      }
      String where =
          node.map(n -> "node " + n).orElse("the nodes of its nodeSelector/allNodes")
              + (hami.isPresent()
                  ? " (a HAMi node: " + Dra.REGISTER_ANNOTATION + " or label gpu=on)"
                  : " (no Node of that name given: it may run HAMi's device plugin)");
      out.add(
          finding(
              hami.isPresent() ? Severity.ERROR : Severity.WARNING,
              slice.location(
                  YamlPath.key(YamlPath.index("spec.devices", first), "allowMultipleAllocations")),
              slice.describe()
                  + " (driver "
                  + Values.string(Values.at(slice.root(), "spec", "driver")).orElse("?")
                  + ") offers "
                  + String.join(", ", shared)
                  + " for several allocations (allowMultipleAllocations: true) on "
                  + where
                  + ": the DRA allocator shares these cards by their consumable capacity while"
                  + " HAMi shares the same cards by its own annotations, and neither sees the"
                  + " other's share, so a card's memory is promised twice.",
              "Run the DRA driver only on nodes without HAMi's device plugin (its DaemonSet's"
                  + " nodeSelector must not select gpu=on nodes; HAMi-DRA:"
                  + " drivers.nvidia.daemonSet.nodeSelector), or move the node off HAMi first."));
    }
    return out;
  }
}
