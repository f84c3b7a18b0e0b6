package dev.hamilock.extender.v1;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * One node's victims as full objects: Go {@code Victims} of {@code
 * k8s.io/kube-scheduler/extender/v1/types.go} (v0.37.2), wire keys {@code Pods} (core/v1 Pod
 * objects), {@code NumPDBViolations}, for an extender without {@code nodeCacheCapable};
 * deep-copied.
 *
 * @param pods the victim pods, in order; a null {@code Pods} decodes to empty, empty encodes as
 *     {@code []}
 * @param numPDBViolations victims whose eviction a PodDisruptionBudget does not allow (Go int64)
 */
public record Victims(List<ObjectNode> pods, long numPDBViolations) {
  public Victims {
    pods = pods.stream().map(ObjectNode::deepCopy).toList();
  }

  @Override
  public List<ObjectNode> pods() {
    return pods.stream().map(ObjectNode::deepCopy).toList();
  }
}
