package dev.hamilock.doctor;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Null-safe reads of Kubernetes objects as Gson trees (absent or wrongly typed fields read as
 * empty).
 */
final class Json {

  private Json() {}

  static JsonObject object(JsonObject o, String... path) {
    JsonObject cur = o;
    for (String p : path) {
      JsonElement e = cur == null ? null : cur.get(p);
      cur = e != null && e.isJsonObject() ? e.getAsJsonObject() : new JsonObject();
    }
    return cur == null ? new JsonObject() : cur;
  }

  static JsonArray array(JsonObject o, String field) {
    JsonElement e = o == null ? null : o.get(field);
    return e != null && e.isJsonArray() ? e.getAsJsonArray() : new JsonArray();
  }

  static List<JsonObject> objects(JsonObject o, String field) {
    List<JsonObject> out = new ArrayList<>();
    for (JsonElement e : array(o, field)) {
      if (e != null && e.isJsonObject()) {
        out.add(e.getAsJsonObject());
      }
    }
    return out;
  }

  static Optional<String> string(JsonObject o, String field) {
    JsonElement e = o == null ? null : o.get(field);
    if (e == null || e.isJsonNull()) {
      return Optional.empty();
    }
    return Optional.of(e.isJsonPrimitive() ? e.getAsString() : e.toString());
  }

  static String text(JsonObject o, String field) {
    return string(o, field).orElse("");
  }

  static Map<String, String> stringMap(JsonObject o) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonElement> e : o.entrySet()) {
      if (e.getValue() != null && !e.getValue().isJsonNull()) {
        out.put(
            e.getKey(),
            e.getValue().isJsonPrimitive() ? e.getValue().getAsString() : e.getValue().toString());
      }
    }
    return out;
  }

  static String name(JsonObject o) {
    return text(object(o, "metadata"), "name");
  }

  static String namespace(JsonObject o) {
    return text(object(o, "metadata"), "namespace");
  }

  static String key(JsonObject o) {
    String ns = namespace(o);
    return ns.isEmpty() ? name(o) : ns + "/" + name(o);
  }

  static Map<String, String> labels(JsonObject o) {
    return stringMap(object(o, "metadata", "labels"));
  }

  static Map<String, String> annotations(JsonObject o) {
    return stringMap(object(o, "metadata", "annotations"));
  }
}
