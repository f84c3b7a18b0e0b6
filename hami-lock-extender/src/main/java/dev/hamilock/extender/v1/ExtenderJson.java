package dev.hamilock.extender.v1;

import static dev.hamilock.extender.v1.GoJson.struct;
import static dev.hamilock.extender.v1.GoJson.write;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * The scheduler-extender wire types ({@code k8s.io/kube-scheduler/extender/v1/types.go}) as Go's
 * {@code encoding/json} reads and writes them: keys match field names case-insensitively (last
 * wins, unknown ignored, {@code null} absent); a wrong JSON type, a {@code null} in a name list or
 * trailing data is an {@link ExtenderJsonException} naming the field. Encoding is byte-exact as
 * {@code json.Marshal}: struct order, {@code null} for absent, sorted map keys, HTML-safe escaping.
 */
public final class ExtenderJson {
  private static final JsonMapper MAPPER = GoJson.MAPPER;

  private ExtenderJson() {}

  /**
   * Decodes a filter (or prioritize) request body (UTF-8 JSON, as every decoder here).
   *
   * @throws ExtenderJsonException if the body is not JSON, not an object, or a field has the wrong
   *     type ({@code Pod} and {@code Nodes} objects, {@code NodeNames} an array of strings)
   */
  public static ExtenderArgs decodeArgs(byte[] json) throws ExtenderJsonException {
    Map<String, JsonNode> f = fields(json, "ExtenderArgs", "Pod", "Nodes", "NodeNames");
    return new ExtenderArgs(
        object(f, "ExtenderArgs", "Pod"),
        object(f, "ExtenderArgs", "Nodes"),
        stringList(f, "ExtenderArgs", "NodeNames"));
  }

  /**
   * @throws ExtenderJsonException on bad JSON or a field of the wrong type
   */
  public static ExtenderFilterResult decodeFilterResult(byte[] json) throws ExtenderJsonException {
    String t = "ExtenderFilterResult";
    Map<String, JsonNode> f =
        fields(json, t, "Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error");
    return new ExtenderFilterResult(
        object(f, t, "Nodes"),
        stringList(f, t, "NodeNames"),
        map(f, t, "FailedNodes", STRINGS, ExtenderJson::text),
        map(f, t, "FailedAndUnresolvableNodes", STRINGS, ExtenderJson::text),
        string(f, t, "Error"));
  }

  /**
   * Decodes a bind request body; absent or null keys are "".
   *
   * @throws ExtenderJsonException on bad JSON or a non-string field
   */
  public static ExtenderBindingArgs decodeBindingArgs(byte[] json) throws ExtenderJsonException {
    String t = "ExtenderBindingArgs";
    Map<String, JsonNode> f = fields(json, t, "PodName", "PodNamespace", "PodUID", "Node");
    return new ExtenderBindingArgs(
        string(f, t, "PodName"),
        string(f, t, "PodNamespace"),
        string(f, t, "PodUID"),
        string(f, t, "Node"));
  }

  /**
   * Decodes a bind response body; an absent or null {@code Error} is "".
   *
   * @throws ExtenderJsonException on bad JSON or a non-string {@code Error}
   */
  public static ExtenderBindingResult decodeBindingResult(byte[] json)
      throws ExtenderJsonException {
    Map<String, JsonNode> f = fields(json, "ExtenderBindingResult", "Error");
    return new ExtenderBindingResult(string(f, "ExtenderBindingResult", "Error"));
  }

  /**
   * @throws ExtenderJsonException on bad JSON, a field of the wrong type, a null victims entry, a
   *     {@code NumPDBViolations} that is not a Go int64, or a {@code Pods} element that is not an
   *     object
   */
  public static ExtenderPreemptionArgs decodePreemptionArgs(byte[] json)
      throws ExtenderJsonException {
    String t = "ExtenderPreemptionArgs";
    Map<String, JsonNode> f = fields(json, t, "Pod", "NodeNameToVictims", "NodeNameToMetaVictims");
    return new ExtenderPreemptionArgs(
        object(f, t, "Pod"),
        map(f, t, "NodeNameToVictims", OBJECTS, ExtenderJson::victims),
        map(f, t, "NodeNameToMetaVictims", OBJECTS, ExtenderJson::metaVictims));
  }

  /**
   * @throws ExtenderJsonException as {@link #decodePreemptionArgs}
   */
  public static ExtenderPreemptionResult decodePreemptionResult(byte[] json)
      throws ExtenderJsonException {
    String t = "ExtenderPreemptionResult";
    Map<String, JsonNode> f = fields(json, t, "NodeNameToMetaVictims");
    return new ExtenderPreemptionResult(
        map(f, t, "NodeNameToMetaVictims", OBJECTS, ExtenderJson::metaVictims));
  }

  private interface Decoder<T> {
    T decode(JsonNode n, String field) throws ExtenderJsonException;
  }

  /**
   * The value of a field, empty when absent or {@code null}; one for which {@code ok} fails is an
   * error ({@link #check}).
   */
  private static Optional<JsonNode> value(
      Map<String, JsonNode> f,
      String at,
      String name,
      Predicate<JsonNode> ok,
      String expected,
      boolean showValue)
      throws ExtenderJsonException {
    JsonNode n = f.get(name);
    return n == null || n.isNull()
        ? Optional.empty()
        : Optional.of(check(n, at, ok, expected, showValue));
  }

  /** {@code n}, or an error naming the field, {@code expected} (and the value if {@code show}). */
  static JsonNode check(
      JsonNode n, String at, Predicate<JsonNode> ok, String expected, boolean show)
      throws ExtenderJsonException {
    if (!ok.test(n)) {
      throw new ExtenderJsonException(
          at, "expected " + expected + ", got " + n.getNodeType() + (show ? " " + n : ""), null);
    }
    return n;
  }

  private static final String OBJECTS = "an object or null";
  private static final String STRINGS = "an object of strings or null";

  /** A Go map: an object whose values {@code values} decodes (null values refused). */
  private static <T> Optional<Map<String, T>> map(
      Map<String, JsonNode> f, String type, String name, String expected, Decoder<T> values)
      throws ExtenderJsonException {
    String field = type + "." + name;
    Optional<JsonNode> n = value(f, field, name, JsonNode::isObject, expected, false);
    if (n.isEmpty()) {
      return Optional.empty();
    }
    Map<String, T> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : n.get().properties()) {
      String at = field + "[\"" + e.getKey() + "\"]";
      out.put(e.getKey(), values.decode(e.getValue(), at));
    }
    return Optional.of(out);
  }

  private static ObjectNode objectAt(JsonNode n, String at, String expected)
      throws ExtenderJsonException {
    return (ObjectNode) check(n, at, JsonNode::isObject, expected, false);
  }

  private static String text(JsonNode n, String at) throws ExtenderJsonException {
    return check(n, at, JsonNode::isTextual, "a string", false).textValue();
  }

  private static Victims victims(JsonNode n, String field) throws ExtenderJsonException {
    objectAt(n, field, "an object");
    Map<String, JsonNode> f = fields(n, field, "Pods", "NumPDBViolations");
    List<ObjectNode> pods = new ArrayList<>();
    for (JsonNode p : array(f, field, "Pods")) {
      pods.add(objectAt(p, field + ".Pods[" + pods.size() + "]", "a Pod object"));
    }
    return new Victims(pods, int64(f, field, "NumPDBViolations"));
  }

  private static MetaVictims metaVictims(JsonNode n, String field) throws ExtenderJsonException {
    objectAt(n, field, "an object");
    Map<String, JsonNode> f = fields(n, field, "Pods", "NumPDBViolations");
    List<MetaPod> pods = new ArrayList<>();
    for (JsonNode p : array(f, field, "Pods")) {
      String at = field + ".Pods[" + pods.size() + "]";
      objectAt(p, at, "a MetaPod object");
      pods.add(new MetaPod(string(fields(p, at, "UID"), at, "UID")));
    }
    return new MetaVictims(pods, int64(f, field, "NumPDBViolations"));
  }

  private static List<JsonNode> array(Map<String, JsonNode> f, String type, String name)
      throws ExtenderJsonException {
    List<JsonNode> out = new ArrayList<>();
    value(f, type + "." + name, name, JsonNode::isArray, "an array or null", false)
        .ifPresent(n -> n.forEach(out::add));
    return out;
  }

  /** Go int64: an integral JSON number in range; null or absent is 0. */
  private static long int64(Map<String, JsonNode> f, String type, String name)
      throws ExtenderJsonException {
    return value(
            f,
            type + "." + name,
            name,
            n -> n.isIntegralNumber() && n.canConvertToLong(),
            "a Go int64",
            true)
        .map(JsonNode::longValue)
        .orElse(0L);
  }

  /**
   * Parses any JSON document into a tree.
   *
   * @throws ExtenderJsonException if it is not a single JSON document
   */
  public static JsonNode readTree(byte[] json) throws ExtenderJsonException {
    try {
      JsonNode n = MAPPER.readTree(json);
      if (n == null || n.isMissingNode()) {
        throw new ExtenderJsonException("", "empty JSON document", null);
      }
      return n;
    } catch (JacksonException e) {
      throw new ExtenderJsonException("", "malformed JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new ExtenderJsonException("", "unreadable JSON: " + e.getMessage(), e);
    }
  }

  /** Top-level object's fields, keyed by the canonical Go field name (case-insensitive match). */
  private static Map<String, JsonNode> fields(byte[] json, String type, String... names)
      throws ExtenderJsonException {
    Objects.requireNonNull(json, "json");
    return fields(readTree(json), type, names);
  }

  private static Map<String, JsonNode> fields(JsonNode root, String type, String... names)
      throws ExtenderJsonException {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    if (root.isNull()) {
      return out; // Go: null into a struct is a no-op
    }
    if (!root.isObject()) {
      throw new ExtenderJsonException(
          type, "expected a JSON object, got " + root.getNodeType(), null);
    }
    for (Map.Entry<String, JsonNode> e : root.properties()) {
      for (String n : names) {
        if (n.equalsIgnoreCase(e.getKey())) {
          out.put(n, e.getValue());
          break;
        }
      }
    }
    return out;
  }

  private static Optional<ObjectNode> object(Map<String, JsonNode> f, String type, String name)
      throws ExtenderJsonException {
    return value(f, type + "." + name, name, JsonNode::isObject, "an object or null", false)
        .map(ObjectNode.class::cast);
  }

  private static Optional<List<String>> stringList(
      Map<String, JsonNode> f, String type, String name) throws ExtenderJsonException {
    Optional<JsonNode> n =
        value(f, type + "." + name, name, JsonNode::isArray, "an array of strings or null", false);
    if (n.isEmpty()) {
      return Optional.empty();
    }
    List<String> out = new ArrayList<>(n.get().size());
    for (JsonNode s : n.get()) {
      String at = type + "." + name + "[" + out.size() + "]";
      out.add(check(s, at, JsonNode::isTextual, "a string", true).textValue());
    }
    return Optional.of(out);
  }

  private static String string(Map<String, JsonNode> f, String type, String name)
      throws ExtenderJsonException {
    return value(f, type + "." + name, name, JsonNode::isTextual, "a string", true)
        .map(JsonNode::textValue)
        .orElse("");
  }

  /** Encodes filter arguments as kube-scheduler does. */
  public static String encode(ExtenderArgs a) {
    return write(struct("Pod", a.pod(), "Nodes", a.nodes(), "NodeNames", a.nodeNames()));
  }

  /** Encodes a filter result byte-exactly as Go's {@code json.Marshal} (fixture F-82). */
  public static String encode(ExtenderFilterResult r) {
    return write(
        struct(
            "Nodes", r.nodes(),
            "NodeNames", r.nodeNames(),
            "FailedNodes", r.failedNodes(),
            "FailedAndUnresolvableNodes", r.failedAndUnresolvableNodes(),
            "Error", r.error()));
  }

  /** Encodes bind arguments as kube-scheduler does. */
  public static String encode(ExtenderBindingArgs a) {
    return write(
        struct(
            "PodName", a.podName(),
            "PodNamespace", a.podNamespace(),
            "PodUID", a.podUID(),
            "Node", a.node()));
  }

  /** Encodes a bind result as HAMi does: {@code {"Error":"…"}}. */
  public static String encode(ExtenderBindingResult r) {
    return write(struct("Error", r.error()));
  }

  /** Encodes preempt arguments as kube-scheduler does. */
  public static String encode(ExtenderPreemptionArgs a) {
    return write(
        struct(
            "Pod", a.pod(),
            "NodeNameToVictims",
                victims(a.nodeNameToVictims(), Victims::pods, Victims::numPDBViolations),
            "NodeNameToMetaVictims", metaVictims(a.nodeNameToMetaVictims())));
  }

  /** Encodes a preempt result byte-exactly as Go's {@code json.Marshal}. */
  public static String encode(ExtenderPreemptionResult r) {
    return write(struct("NodeNameToMetaVictims", metaVictims(r.nodeNameToMetaVictims())));
  }

  private static JsonNode metaVictims(Optional<Map<String, MetaVictims>> m) {
    return victims(
        m,
        v -> v.pods().stream().map(p -> struct("UID", p.uid())).toList(),
        MetaVictims::numPDBViolations);
  }

  /** A Go map of victims: {@code {"<node>":{"Pods":[…],"NumPDBViolations":n}}}, or null. */
  private static <V> JsonNode victims(
      Optional<Map<String, V>> m,
      Function<V, List<? extends JsonNode>> pods,
      ToLongFunction<V> violations) {
    if (m.isEmpty()) {
      return NullNode.getInstance();
    }
    ObjectNode out = struct();
    m.get() // sorted by the record
        .forEach(
            (node, v) -> {
              ObjectNode o = out.putObject(node);
              o.putArray("Pods").addAll(pods.apply(v));
              o.put("NumPDBViolations", violations.applyAsLong(v));
            });
    return out;
  }
}
