package dev.hamilock.extender.v1;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.InvalidQuantityException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.Quantities;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the core/v1 Pod and Node objects embedded in extender payloads straight into the device
 * SPI's {@link PodView} and {@link NodeView}, without a Kubernetes client. Only the fields the
 * device layer reads are looked at; everything else is ignored.
 *
 * <p>Pod fields: {@code metadata.namespace} (absent ⇒ {@code default}), {@code metadata.name}
 * (required), {@code metadata.uid}, {@code metadata.labels}, {@code metadata.annotations},
 * {@code metadata.deletionTimestamp}, {@code spec.schedulingGroup.podGroupName},
 * {@code spec.initContainers} and {@code spec.containers} ({@code name}, {@code image},
 * {@code resources.limits}, {@code resources.requests} as quantities such as {@code 3000} or
 * {@code 16Gi}), {@code status.phase}. Node fields: {@code metadata.name}, {@code labels},
 * {@code annotations}, {@code status.allocatable}.
 *
 * <p>Stateless and thread-safe.
 */
public final class KubeJson {
  private KubeJson() {}

  /**
   * Converts a core/v1 Pod object.
   *
   * @param pod the Pod object (e.g. {@link ExtenderArgs#pod()})
   * @return the view
   * @throws ExtenderJsonException naming the field path (from {@code Pod.}) when the name is
   *     missing, a map holds a non-string value, a field has the wrong JSON type, or a resource
   *     quantity is malformed
   */
  public static PodView podView(JsonNode pod) throws ExtenderJsonException {
    requireObject(pod, "Pod");
    JsonNode meta = optObject(pod, "metadata", "Pod.metadata");
    String name = text(meta, "name", "Pod.metadata.name");
    if (name.isEmpty()) {
      throw new ExtenderJsonException("Pod.metadata.name", "missing or empty", null);
    }
    String ns = text(meta, "namespace", "Pod.metadata.namespace");
    JsonNode spec = optObject(pod, "spec", "Pod.spec");
    JsonNode group = optObject(spec, "schedulingGroup", "Pod.spec.schedulingGroup");
    String groupName = text(group, "podGroupName", "Pod.spec.schedulingGroup.podGroupName");
    JsonNode status = optObject(pod, "status", "Pod.status");
    JsonNode deletion = meta == null ? null : meta.get("deletionTimestamp");
    return PodView.builder(ns.isEmpty() ? "default" : ns, name)
        .uid(text(meta, "uid", "Pod.metadata.uid"))
        .labels(stringMap(meta, "labels", "Pod.metadata.labels"))
        .annotations(stringMap(meta, "annotations", "Pod.metadata.annotations"))
        .podGroupName(groupName.isEmpty() ? null : groupName)
        .phase(PodView.Phase.fromKubernetes(text(status, "phase", "Pod.status.phase")))
        .deleting(deletion != null && !deletion.isNull())
        .initContainers(containers(spec, "initContainers"))
        .containers(containers(spec, "containers"))
        .nodeName(text(spec, "nodeName", "Pod.spec.nodeName"))
        .build();
  }

  /**
   * Converts a core/v1 Node object.
   *
   * @param node the Node object (e.g. an item of {@link ExtenderArgs#nodeItems()})
   * @return the view
   * @throws ExtenderJsonException naming the field path (from {@code Node.}) when the name is
   *     missing, a map holds a non-string value, or an allocatable quantity is malformed
   */
  public static NodeView nodeView(JsonNode node) throws ExtenderJsonException {
    requireObject(node, "Node");
    JsonNode meta = optObject(node, "metadata", "Node.metadata");
    String name = text(meta, "name", "Node.metadata.name");
    if (name.isEmpty()) {
      throw new ExtenderJsonException("Node.metadata.name", "missing or empty", null);
    }
    JsonNode status = optObject(node, "status", "Node.status");
    Map<String, String> alloc = quantityMap(status, "allocatable", "Node.status.allocatable");
    Map<String, BigDecimal> allocatable = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : alloc.entrySet()) {
      try {
        allocatable.put(e.getKey(), Quantities.parse(e.getValue()));
      } catch (InvalidQuantityException ex) {
        throw new ExtenderJsonException(
            "Node.status.allocatable[\"" + e.getKey() + "\"]", ex.getMessage(), ex);
      }
    }
    return new NodeView(name, stringMap(meta, "labels", "Node.metadata.labels"),
        stringMap(meta, "annotations", "Node.metadata.annotations"), allocatable);
  }

  private static List<ContainerView> containers(JsonNode spec, String field)
      throws ExtenderJsonException {
    String path = "Pod.spec." + field;
    JsonNode arr = spec == null ? null : spec.get(field);
    if (arr == null || arr.isNull()) {
      return List.of();
    }
    if (!arr.isArray()) {
      throw new ExtenderJsonException(path, "expected an array, got " + arr.getNodeType(), null);
    }
    List<ContainerView> out = new ArrayList<>(arr.size());
    for (int i = 0; i < arr.size(); i++) {
      String cp = path + "[" + i + "]";
      JsonNode c = arr.get(i);
      requireObject(c, cp);
      JsonNode res = optObject(c, "resources", cp + ".resources");
      Map<String, String> limits = quantityMap(res, "limits", cp + ".resources.limits");
      Map<String, String> requests = quantityMap(res, "requests", cp + ".resources.requests");
      String cname = text(c, "name", cp + ".name");
      try {
        out.add(ContainerView.ofQuantities(cname, text(c, "image", cp + ".image"), limits, requests));
      } catch (InvalidQuantityException ex) {
        throw new ExtenderJsonException(cp + ".resources", ex.getMessage(), ex);
      }
    }
    return out;
  }

  private static void requireObject(JsonNode n, String path) throws ExtenderJsonException {
    if (n == null || !n.isObject()) {
      throw new ExtenderJsonException(path, "expected an object, got "
          + (n == null ? "nothing" : n.getNodeType()), null);
    }
  }

  private static JsonNode optObject(JsonNode parent, String field, String path)
      throws ExtenderJsonException {
    JsonNode n = parent == null ? null : parent.get(field);
    if (n == null || n.isNull()) {
      return null;
    }
    if (!n.isObject()) {
      throw new ExtenderJsonException(path, "expected an object, got " + n.getNodeType(), null);
    }
    return n;
  }

  private static String text(JsonNode parent, String field, String path)
      throws ExtenderJsonException {
    JsonNode n = parent == null ? null : parent.get(field);
    if (n == null || n.isNull()) {
      return "";
    }
    if (!n.isTextual()) {
      throw new ExtenderJsonException(path, "expected a string, got " + n.getNodeType() + " " + n, null);
    }
    return n.textValue();
  }

  private static Map<String, String> stringMap(JsonNode parent, String field, String path)
      throws ExtenderJsonException {
    JsonNode n = optObject(parent, field, path);
    Map<String, String> out = new LinkedHashMap<>();
    if (n == null) {
      return out;
    }
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      if (!e.getValue().isTextual()) {
        throw new ExtenderJsonException(path + "[\"" + e.getKey() + "\"]",
            "expected a string, got " + e.getValue().getNodeType() + " " + e.getValue(), null);
      }
      out.put(e.getKey(), e.getValue().textValue());
    }
    return out;
  }

  /** Quantities are JSON strings in Kubernetes objects; plain JSON numbers are accepted too. */
  private static Map<String, String> quantityMap(JsonNode parent, String field, String path)
      throws ExtenderJsonException {
    JsonNode n = optObject(parent, field, path);
    Map<String, String> out = new LinkedHashMap<>();
    if (n == null) {
      return out;
    }
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      JsonNode v = e.getValue();
      if (v.isTextual()) {
        out.put(e.getKey(), v.textValue());
      } else if (v.isIntegralNumber() || v.isBigDecimal() || v.isDouble()) {
        out.put(e.getKey(), v.isIntegralNumber() ? v.bigIntegerValue().toString()
            : v.decimalValue().toPlainString());
      } else {
        throw new ExtenderJsonException(path + "[\"" + e.getKey() + "\"]",
            "expected a quantity string, got " + v.getNodeType() + " " + v, null);
      }
    }
    return out;
  }
}
