package dev.hamilock.extender.v1;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Go {@code ExtenderArgs} ({@code k8s.io/kube-scheduler/extender/v1/types.go}), the filter verb's
 * request; empty is absent or {@code null} on the wire. JSON trees are deep-copied in and out.
 *
 * @param pod the core/v1 Pod being scheduled
 * @param nodes the candidate core/v1 NodeList ({@code nodeCacheCapable: false})
 * @param nodeNames candidate node names ({@code nodeCacheCapable: true}, HAMi's chart)
 */
public record ExtenderArgs(
    Optional<ObjectNode> pod, Optional<ObjectNode> nodes, Optional<List<String>> nodeNames) {

  public ExtenderArgs {
    pod = Objects.requireNonNull(pod, "pod").map(ObjectNode::deepCopy);
    nodes = Objects.requireNonNull(nodes, "nodes").map(ObjectNode::deepCopy);
    nodeNames = Objects.requireNonNull(nodeNames, "nodeNames").map(List::copyOf);
  }

  /** Arguments as a {@code nodeCacheCapable} kube-scheduler sends them. */
  public static ExtenderArgs ofNodeNames(ObjectNode pod, List<String> nodeNames) {
    return new ExtenderArgs(Optional.of(pod), Optional.empty(), Optional.of(nodeNames));
  }

  @Override
  public Optional<ObjectNode> pod() {
    return pod.map(ObjectNode::deepCopy);
  }

  @Override
  public Optional<ObjectNode> nodes() {
    return nodes.map(ObjectNode::deepCopy);
  }

  /**
   * Deep copies of {@code Nodes.items}, in order; empty without items.
   *
   * @throws ExtenderJsonException if {@code Nodes.items} is present but not an array of objects
   */
  public List<ObjectNode> nodeItems() throws ExtenderJsonException {
    JsonNode items = nodes.map(n -> n.get("items")).orElse(null);
    if (items == null || items.isNull()) {
      return List.of();
    }
    String at = "ExtenderArgs.Nodes.items";
    ExtenderJson.check(items, at, JsonNode::isArray, "an array", false);
    List<ObjectNode> out = new ArrayList<>(items.size());
    for (JsonNode n : items) {
      String item = at + "[" + out.size() + "]";
      out.add(
          ((ObjectNode) ExtenderJson.check(n, item, JsonNode::isObject, "a Node object", false))
              .deepCopy());
    }
    return out;
  }
}
