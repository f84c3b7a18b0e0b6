package dev.hamilock.k8s.bind;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.hamilock.bind.cluster.ClusterPod;
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
import java.util.Optional;

/**
 * Schema-free mapping of Pod and Node JSON (as the API server sends it) to the device layer's
 * views — the JSON counterpart of {@code dev.hamilock.k8s.view.KubernetesViews}, which maps
 * client-java models. Only the fields the views need are read; every other field, known or not
 * (kube-api-notes §4.2), is ignored. Absent maps and lists read as empty (§4.3).
 *
 * <p>Stateless.
 */
final class ObjectJson {

  /** A Pod or Node JSON document lacks a field the views need or carries a malformed one. */
  static final class MalformedObjectException extends Exception {
    private static final long serialVersionUID = 1L;

    MalformedObjectException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private ObjectJson() {}

  /**
   * @param pod a Pod object (GET answer or list item)
   * @return the pod with {@code spec.nodeName} and {@code metadata.resourceVersion}
   * @throws MalformedObjectException naming the pod and field: missing namespace/name, a container
   *     without name, or a resource quantity that does not parse
   */
  static ClusterPod pod(JsonObject pod) throws MalformedObjectException {
    JsonObject meta = object(pod, "metadata");
    String namespace = string(meta, "namespace");
    String name = string(meta, "name");
    if (namespace.isEmpty() || name.isEmpty()) {
      throw new MalformedObjectException("pod without metadata.namespace or metadata.name: " + namespace + "/" + name,
          null);
    }
    JsonObject spec = object(pod, "spec");
    JsonObject status = object(pod, "status");
    String podGroup = string(object(spec, "schedulingGroup"), "podGroupName");
    String key = namespace + "/" + name;
    PodView view = PodView.builder(namespace, name)
        .uid(string(meta, "uid"))
        .labels(stringMap(object(meta, "labels")))
        .annotations(stringMap(object(meta, "annotations")))
        .podGroupName(podGroup.isEmpty() ? null : podGroup)
        .phase(PodView.Phase.fromKubernetes(string(status, "phase")))
        .deleting(present(meta, "deletionTimestamp"))
        .initContainers(containers(key, array(spec, "initContainers")))
        .containers(containers(key, array(spec, "containers")))
        .build();
    String nodeName = string(spec, "nodeName");
    return new ClusterPod(view, nodeName.isBlank() ? Optional.empty() : Optional.of(nodeName),
        string(meta, "resourceVersion"));
  }

  /**
   * @param node a Node object
   * @return the node with {@code status.allocatable} as exact decimals
   * @throws MalformedObjectException if the name is missing or an allocatable quantity does not parse
   */
  static NodeView node(JsonObject node) throws MalformedObjectException {
    JsonObject meta = object(node, "metadata");
    String name = string(meta, "name");
    if (name.isEmpty()) {
      throw new MalformedObjectException("node without metadata.name", null);
    }
    Map<String, BigDecimal> allocatable;
    try {
      allocatable = quantities(object(object(node, "status"), "allocatable"));
    } catch (InvalidQuantityException e) {
      throw new MalformedObjectException("node " + name + " status.allocatable: " + e.getMessage(), e);
    }
    return new NodeView(name, stringMap(object(meta, "labels")), stringMap(object(meta, "annotations")), allocatable);
  }

  /**
   * @param list a list answer ({@code {"items":[…]}})
   * @return the item objects, in list order (non-objects skipped)
   */
  static List<JsonObject> items(JsonObject list) {
    List<JsonObject> out = new ArrayList<>();
    for (JsonElement e : array(list, "items")) {
      if (e != null && e.isJsonObject()) {
        out.add(e.getAsJsonObject());
      }
    }
    return out;
  }

  /** @return {@code o.metadata.annotations[key]} if present */
  static Optional<String> annotation(JsonObject o, String key) {
    JsonElement v = object(object(o, "metadata"), "annotations").get(key);
    return v == null || v.isJsonNull() ? Optional.empty() : Optional.of(text(v));
  }

  private static List<ContainerView> containers(String pod, JsonArray in) throws MalformedObjectException {
    List<ContainerView> out = new ArrayList<>();
    for (JsonElement e : in) {
      if (e == null || !e.isJsonObject()) {
        continue;
      }
      JsonObject c = e.getAsJsonObject();
      String name = string(c, "name");
      if (name.isEmpty()) {
        throw new MalformedObjectException("pod " + pod + " has a container without name", null);
      }
      JsonObject resources = object(c, "resources");
      try {
        out.add(new ContainerView(name, string(c, "image"), quantities(object(resources, "limits")),
            quantities(object(resources, "requests"))));
      } catch (InvalidQuantityException ex) {
        throw new MalformedObjectException("pod " + pod + " container " + name + ": " + ex.getMessage(), ex);
      }
    }
    return out;
  }

  private static Map<String, BigDecimal> quantities(JsonObject o) throws InvalidQuantityException {
    Map<String, BigDecimal> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonElement> e : o.entrySet()) {
      if (e.getValue() == null || e.getValue().isJsonNull()) {
        continue;
      }
      try {
        out.put(e.getKey(), Quantities.parse(text(e.getValue())));
      } catch (InvalidQuantityException ex) {
        throw new InvalidQuantityException(ex.value(), "resource " + e.getKey() + ": " + ex.getMessage());
      }
    }
    return out;
  }

  private static Map<String, String> stringMap(JsonObject o) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonElement> e : o.entrySet()) {
      if (e.getValue() != null && !e.getValue().isJsonNull()) {
        out.put(e.getKey(), text(e.getValue()));
      }
    }
    return out;
  }

  private static String text(JsonElement e) {
    return e.isJsonPrimitive() ? e.getAsString() : e.toString();
  }

  private static boolean present(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e != null && !e.isJsonNull();
  }

  private static JsonObject object(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e != null && e.isJsonObject() ? e.getAsJsonObject() : new JsonObject();
  }

  private static JsonArray array(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e != null && e.isJsonArray() ? e.getAsJsonArray() : new JsonArray();
  }

  private static String string(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
  }
}
