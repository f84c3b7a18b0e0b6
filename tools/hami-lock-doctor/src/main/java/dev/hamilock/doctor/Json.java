package dev.hamilock.doctor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Null-safe reads of the Kubernetes objects that are not Pods or Nodes read through {@code
 * JsonViews} (events, PodGroups, ConfigMaps, Deployments, a Pod's status), on the Jackson trees
 * {@code JsonViews.readObject} parses: absent or wrongly typed fields read as empty.
 */
final class Json {

  private Json() {}

  /**
   * @return the object at {@code path} below {@code o}, or a missing node (whose fields are all
   *     missing) where a step is absent or not an object
   */
  static JsonNode object(JsonNode o, String... path) {
    JsonNode cur = o;
    for (String p : path) {
      cur = cur.path(p);
    }
    return cur.isObject() ? cur : MissingNode.getInstance();
  }

  static List<JsonNode> objects(JsonNode o, String field) {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode e : o.path(field)) {
      if (e.isObject()) {
        out.add(e);
      }
    }
    return out;
  }

  static Optional<String> string(JsonNode o, String field) {
    JsonNode e = o.path(field);
    if (e.isMissingNode() || e.isNull()) {
      return Optional.empty();
    }
    return Optional.of(e.isValueNode() ? e.asText() : e.toString());
  }

  static String text(JsonNode o, String field) {
    return string(o, field).orElse("");
  }

  private static Map<String, String> stringMap(JsonNode o) {
    Map<String, String> out = new LinkedHashMap<>();
    o.fieldNames().forEachRemaining(k -> string(o, k).ifPresent(v -> out.put(k, v)));
    return out;
  }

  static String name(JsonNode o) {
    return text(object(o, "metadata"), "name");
  }

  static String namespace(JsonNode o) {
    return text(object(o, "metadata"), "namespace");
  }

  static String key(JsonNode o) {
    String ns = namespace(o);
    return ns.isEmpty() ? name(o) : ns + "/" + name(o);
  }

  static Map<String, String> labels(JsonNode o) {
    return stringMap(object(o, "metadata", "labels"));
  }

  static Map<String, String> annotations(JsonNode o) {
    return stringMap(object(o, "metadata", "annotations"));
  }
}
