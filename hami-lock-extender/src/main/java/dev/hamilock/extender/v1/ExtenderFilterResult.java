package dev.hamilock.extender.v1;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Go {@code ExtenderFilterResult} ({@code k8s.io/kube-scheduler/extender/v1/types.go}); empty is
 * {@code null} on the wire.
 *
 * @param nodes passing nodes as a core/v1 NodeList ({@code nodeCacheCapable: false} only)
 * @param nodeNames passing node names ({@code nodeCacheCapable: true})
 * @param failedNodes node name to reason (preemption may help), sorted by node name
 * @param failedAndUnresolvableNodes as {@code failedNodes}, but preemption cannot help
 * @param error error text; "" when none
 */
public record ExtenderFilterResult(
    Optional<ObjectNode> nodes,
    Optional<List<String>> nodeNames,
    Optional<Map<String, String>> failedNodes,
    Optional<Map<String, String>> failedAndUnresolvableNodes,
    String error) {

  /** Copies, maps sorted by key as Go writes them. */
  public ExtenderFilterResult {
    nodes = Objects.requireNonNull(nodes, "nodes").map(ObjectNode::deepCopy);
    nodeNames = Objects.requireNonNull(nodeNames, "nodeNames").map(List::copyOf);
    failedNodes =
        Objects.requireNonNull(failedNodes, "failedNodes").map(ExtenderPreemptionResult::sorted);
    failedAndUnresolvableNodes =
        Objects.requireNonNull(failedAndUnresolvableNodes, "failedAndUnresolvableNodes")
            .map(ExtenderPreemptionResult::sorted);
    Objects.requireNonNull(error, "error");
  }

  /** HAMi's success shape ({@code pkg/scheduler/scheduler.go} Filter): only {@code NodeNames}. */
  public static ExtenderFilterResult ofNodeNames(List<String> nodeNames) {
    return new ExtenderFilterResult(
        Optional.empty(), Optional.of(nodeNames), Optional.empty(), Optional.empty(), "");
  }

  /** HAMi's no-fit shape: only {@code FailedNodes}, node name to reason. */
  public static ExtenderFilterResult ofFailedNodes(Map<String, String> failedNodes) {
    return new ExtenderFilterResult(
        Optional.empty(), Optional.empty(), Optional.of(failedNodes), Optional.empty(), "");
  }

  /** HAMi's error shape (sent with HTTP 200): only {@code Error} set. */
  public static ExtenderFilterResult ofError(String error) {
    return new ExtenderFilterResult(
        Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), error);
  }

  @Override
  public Optional<ObjectNode> nodes() {
    return nodes.map(ObjectNode::deepCopy);
  }

  /** The names of every node this answer covers, passing or failed. */
  public Set<String> coveredNodes() {
    Set<String> names = new HashSet<>();
    nodeNames.ifPresent(names::addAll);
    failedNodes.ifPresent(m -> names.addAll(m.keySet()));
    failedAndUnresolvableNodes.ifPresent(m -> names.addAll(m.keySet()));
    nodes.ifPresent(
        list ->
            list.path("items").forEach(n -> names.add(n.path("metadata").path("name").asText())));
    return names;
  }
}
