package dev.hamilock.testkit.jsonpatch;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * An RFC 6902 JSON Patch with the semantics of {@code gopkg.in/evanphx/json-patch.v4}, the library
 * kube-apiserver uses ({@code staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go}).
 *
 * <p>Differences from strict RFC 6902 that are reproduced on purpose:
 *
 * <ul>
 *   <li>{@code test} with {@code "value": null} (or no value) passes when the member is absent or
 *       JSON null, provided its parent exists;
 *   <li>{@code replace} of an absent object member adds it;
 *   <li>{@code remove} of an absent member fails; {@code add} under a missing parent fails;
 *   <li>a path is split on {@code /} and its first segment ignored (so {@code "a/b"} addresses
 *       member {@code b} of the root); {@code ""} (the whole document) is not addressable;
 *   <li>negative array indexes count from the end;
 *   <li>values are compared structurally by Jackson equality ({@code 1} and {@code 1.0} differ, as
 *       the Go library compares the compact JSON text of scalars).
 * </ul>
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class JsonPatch {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final List<ObjectNode> operations;

  private JsonPatch(List<ObjectNode> operations) {
    this.operations = operations;
  }

  /**
   * Decodes a patch document.
   *
   * @param json UTF-8 JSON text; must be an array of objects
   * @throws MalformedPatchException if the text is not JSON or not an array of objects (the
   *     apiserver answers 400 BadRequest)
   */
  public static JsonPatch parse(byte[] json) throws MalformedPatchException {
    Objects.requireNonNull(json, "json");
    JsonNode tree;
    try {
      tree = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new MalformedPatchException("invalid JSON patch: " + e.getOriginalMessage());
    } catch (java.io.IOException e) {
      throw new MalformedPatchException("invalid JSON patch: " + e.getMessage());
    }
    if (tree == null || !tree.isArray()) {
      throw new MalformedPatchException(
          "error decoding patch: json: cannot unmarshal "
              + (tree == null ? "empty document" : tree.getNodeType().name().toLowerCase())
              + " into Go value of type []handlers.jsonPatchOp");
    }
    List<ObjectNode> ops = new ArrayList<>();
    for (JsonNode op : tree) {
      if (!op.isObject()) {
        throw new MalformedPatchException(
            "error decoding patch: json: cannot unmarshal "
                + op.getNodeType().name().toLowerCase()
                + " into Go value of type handlers.jsonPatchOp");
      }
      ops.add((ObjectNode) op.deepCopy());
    }
    return new JsonPatch(List.copyOf(ops));
  }

  /**
   * Decodes a patch document given as text.
   *
   * @throws MalformedPatchException as {@link #parse(byte[])}
   */
  public static JsonPatch parse(String json) throws MalformedPatchException {
    return parse(json.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * @return the number of operations
   */
  public int size() {
    return operations.size();
  }

  /**
   * Applies the patch to a copy of {@code document}; the argument is never modified.
   *
   * @param document the target; must be a JSON object or array
   * @throws PatchNotApplicableException if any operation fails; nothing is applied then
   */
  public JsonNode apply(JsonNode document) throws PatchNotApplicableException {
    Objects.requireNonNull(document, "document");
    if (!document.isContainerNode()) {
      throw new PatchNotApplicableException("document is not a JSON object or array");
    }
    Holder root = new Holder(document.deepCopy());
    for (ObjectNode op : operations) {
      String kind = text(op, "op");
      switch (kind) {
        case "add" -> add(root, op);
        case "remove" -> remove(root, op);
        case "replace" -> replace(root, op);
        case "move" -> move(root, op);
        case "copy" -> copy(root, op);
        case "test" -> test(root, op);
        default -> throw new PatchNotApplicableException("Unexpected kind: " + kind);
      }
    }
    return root.node;
  }

  /** Mutable reference to the root so that the document identity survives operations. */
  private static final class Holder {
    final JsonNode node;

    Holder(JsonNode node) {
      this.node = node;
    }
  }

  private record Target(JsonNode container, String key) {}

  private static String text(ObjectNode op, String field) {
    JsonNode n = op.get(field);
    return n != null && n.isTextual() ? n.asText() : "unknown";
  }

  private static JsonNode value(ObjectNode op) {
    JsonNode v = op.get("value");
    return v == null ? NullNode.getInstance() : v.deepCopy();
  }

  /** evanphx v4 findObject: the container holding the last token, or null. */
  private static Target find(Holder root, String path) {
    String[] split = path.split("/", -1);
    if (split.length < 2) {
      return null;
    }
    JsonNode doc = root.node;
    for (int i = 1; i < split.length - 1; i++) {
      JsonNode next;
      try {
        next = get(doc, JsonPointer.unescape(split[i]));
      } catch (PatchNotApplicableException e) {
        return null;
      }
      if (next == null || !next.isContainerNode()) {
        return null;
      }
      doc = next;
    }
    return new Target(doc, JsonPointer.unescape(split[split.length - 1]));
  }

  /** Member or element; null when absent or JSON null (Go's nil *lazyNode). */
  private static JsonNode get(JsonNode container, String key) throws PatchNotApplicableException {
    if (container.isObject()) {
      JsonNode v = container.get(key);
      return v == null || v.isNull() ? null : v;
    }
    ArrayNode a = (ArrayNode) container;
    JsonNode v = a.get(index(a, key, a.size() - 1));
    return v == null || v.isNull() ? null : v;
  }

  /** Parses an array index; accepts negative indexes from the end; max is inclusive. */
  private static int index(ArrayNode a, String key, int max) throws PatchNotApplicableException {
    int idx;
    try {
      idx = Integer.parseInt(key);
    } catch (NumberFormatException e) {
      throw new PatchNotApplicableException("value was not a proper array index: '" + key + "'");
    }
    if (idx > max) {
      throw new PatchNotApplicableException("Unable to access invalid index: " + idx);
    }
    if (idx < 0) {
      if (idx < -(max + 1)) {
        throw new PatchNotApplicableException("Unable to access invalid index: " + idx);
      }
      idx += max + 1;
    }
    return idx;
  }

  private static void addTo(Target t, JsonNode val) throws PatchNotApplicableException {
    if (t.container.isObject()) {
      ((ObjectNode) t.container).set(t.key, val);
      return;
    }
    ArrayNode a = (ArrayNode) t.container;
    if (t.key.equals("-")) {
      a.add(val);
      return;
    }
    a.insert(index(a, t.key, a.size()), val);
  }

  private static void removeFrom(Target t) throws PatchNotApplicableException {
    if (t.container.isObject()) {
      ObjectNode o = (ObjectNode) t.container;
      if (!o.has(t.key)) {
        throw new PatchNotApplicableException(
            "Unable to remove nonexistent key: " + t.key + ": missing value");
      }
      o.remove(t.key);
      return;
    }
    ArrayNode a = (ArrayNode) t.container;
    a.remove(index(a, t.key, a.size() - 1));
  }

  private static void add(Holder root, ObjectNode op) throws PatchNotApplicableException {
    String path = text(op, "path");
    Target t = find(root, path);
    if (t == null) {
      throw new PatchNotApplicableException(
          "add operation does not apply: doc is missing path: \"" + path + "\": missing value");
    }
    addTo(t, value(op));
  }

  private static void remove(Holder root, ObjectNode op) throws PatchNotApplicableException {
    String path = text(op, "path");
    Target t = find(root, path);
    if (t == null) {
      throw new PatchNotApplicableException(
          "remove operation does not apply: doc is missing path: \"" + path + "\": missing value");
    }
    removeFrom(t);
  }

  private static void replace(Holder root, ObjectNode op) throws PatchNotApplicableException {
    String path = text(op, "path");
    Target t = find(root, path);
    if (t == null) {
      throw new PatchNotApplicableException(
          "replace operation does not apply: doc is missing path: " + path + ": missing value");
    }
    if (t.container.isObject()) {
      ((ObjectNode) t.container).set(t.key, value(op)); // v4: absent member is added
    } else {
      ArrayNode a = (ArrayNode) t.container;
      a.set(index(a, t.key, a.size() - 1), value(op));
    }
  }

  private static void move(Holder root, ObjectNode op) throws PatchNotApplicableException {
    String from = text(op, "from");
    Target src = find(root, from);
    if (src == null) {
      throw new PatchNotApplicableException(
          "move operation does not apply: doc is missing from path: " + from + ": missing value");
    }
    JsonNode val = get(src.container, src.key);
    removeFrom(src);
    String path = text(op, "path");
    Target dst = find(root, path);
    if (dst == null) {
      throw new PatchNotApplicableException(
          "move operation does not apply: doc is missing destination"
              + " path: "
              + path
              + ": missing value");
    }
    addTo(dst, val == null ? NullNode.getInstance() : val);
  }

  private static void copy(Holder root, ObjectNode op) throws PatchNotApplicableException {
    String from = text(op, "from");
    Target src = find(root, from);
    if (src == null) {
      throw new PatchNotApplicableException(
          "copy operation does not apply: doc is missing from path: " + from + ": missing value");
    }
    JsonNode val = get(src.container, src.key);
    if (val == null) {
      throw new PatchNotApplicableException(
          "copy operation does not apply: doc is missing from path: " + from + ": missing value");
    }
    String path = text(op, "path");
    Target dst = find(root, path);
    if (dst == null) {
      throw new PatchNotApplicableException(
          "copy operation does not apply: doc is missing destination"
              + " path: "
              + path
              + ": missing value");
    }
    addTo(dst, val.deepCopy());
  }

  private static void test(Holder root, ObjectNode op) throws PatchNotApplicableException {
    String path = text(op, "path");
    Target t = find(root, path);
    if (t == null) {
      throw new PatchNotApplicableException(
          "test operation does not apply: is missing path: " + path + ": missing value");
    }
    JsonNode actual = get(t.container, t.key);
    JsonNode expected = op.get("value");
    boolean expectNull = expected == null || expected.isNull();
    if (actual == null) {
      if (expectNull) {
        return;
      }
    } else if (!expectNull && actual.equals(expected)) {
      return;
    }
    throw new PatchNotApplicableException("testing value " + path + " failed: test failed");
  }

  @Override
  public String toString() {
    try {
      return MAPPER.writeValueAsString(operations);
    } catch (JsonProcessingException e) {
      return operations.toString();
    }
  }
}
