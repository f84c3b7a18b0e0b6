package dev.hamilock.extender.v1;

import java.util.Objects;

/**
 * What kube-scheduler POSTs to the extender's bind verb: Go {@code ExtenderBindingArgs} of {@code
 * k8s.io/kube-scheduler/extender/v1/types.go}, wire keys {@code PodName}, {@code PodNamespace},
 * {@code PodUID}, {@code Node}. Absent or {@code null} keys decode to "" (Go's zero value).
 */
public record ExtenderBindingArgs(String podName, String podNamespace, String podUID, String node) {
  public ExtenderBindingArgs {
    Objects.requireNonNull(podName, "podName");
    Objects.requireNonNull(podNamespace, "podNamespace");
    Objects.requireNonNull(podUID, "podUID");
    Objects.requireNonNull(node, "node");
  }
}
