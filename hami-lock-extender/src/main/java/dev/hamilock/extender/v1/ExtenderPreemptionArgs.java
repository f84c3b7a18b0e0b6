package dev.hamilock.extender.v1;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What kube-scheduler POSTs to the extender's preempt verb: Go {@code ExtenderPreemptionArgs} of
 * {@code k8s.io/kube-scheduler/extender/v1/types.go} (v0.37.2), wire keys {@code Pod}, {@code
 * NodeNameToVictims} (without {@code nodeCacheCapable}), {@code NodeNameToMetaVictims} (with it).
 *
 * @param pod the preemptor, a core/v1 Pod ({@code Pod}); empty when absent or null
 * @param nodeNameToVictims node name to victims as full pods; empty when null; sorted by node name
 * @param nodeNameToMetaVictims node name to victims by UID; empty when null; sorted by node name
 */
public record ExtenderPreemptionArgs(
    Optional<ObjectNode> pod,
    Optional<Map<String, Victims>> nodeNameToVictims,
    Optional<Map<String, MetaVictims>> nodeNameToMetaVictims) {

  public ExtenderPreemptionArgs {
    pod = Objects.requireNonNull(pod, "pod").map(ObjectNode::deepCopy);
    nodeNameToVictims =
        Objects.requireNonNull(nodeNameToVictims, "nodeNameToVictims")
            .map(ExtenderPreemptionResult::sorted);
    nodeNameToMetaVictims =
        Objects.requireNonNull(nodeNameToMetaVictims, "nodeNameToMetaVictims")
            .map(ExtenderPreemptionResult::sorted);
  }

  @Override
  public Optional<ObjectNode> pod() {
    return pod.map(ObjectNode::deepCopy);
  }
}
