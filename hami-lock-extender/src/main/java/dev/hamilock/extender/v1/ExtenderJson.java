package dev.hamilock.extender.v1;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Reads and writes the scheduler-extender wire types exactly as Go's {@code encoding/json} does for
 * the tag-less structs of {@code k8s.io/kube-scheduler/extender/v1/types.go}.
 *
 * <ul>
 *   <li><b>Decoding</b> (like Go's {@code json.Unmarshal}): top-level must be an object (or {@code
 *       null}, which decodes to all-absent values); keys match the Go field names
 *       case-insensitively, the last occurrence wins, unknown keys are ignored; {@code null} means
 *       absent. Unlike Go, a wrong JSON type or a {@code null} inside a name list is an {@link
 *       ExtenderJsonException} naming the field, never a silent zero value; trailing data after the
 *       document is rejected.
 *   <li><b>Encoding</b> (like Go's {@code json.Marshal}): PascalCase keys in struct order, absent
 *       values as {@code null}, {@code Error} always present, map keys sorted, no whitespace, and
 *       Go's HTML-safe escaping of {@code <}, {@code >}, {@code &}, U+2028 and U+2029 as <code>
 *       &#92;u003c</code> etc.
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
public final class ExtenderJson {
  private static final GoEscapes GO_ESCAPES = new GoEscapes();
  private static final JsonMapper MAPPER =
      JsonMapper.builder()
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .build();

  private ExtenderJson() {}

  // ------------------------------------------------------------------------------- decoding

  /**
   * Decodes a filter (or prioritize) request body.
   *
   * @param json UTF-8 JSON
   * @return the arguments
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
   * Decodes a filter response body (for embedders acting as kube-scheduler, and tests).
   *
   * @param json UTF-8 JSON
   * @return the result
   * @throws ExtenderJsonException on bad JSON or a field of the wrong type
   */
  public static ExtenderFilterResult decodeFilterResult(byte[] json) throws ExtenderJsonException {
    String t = "ExtenderFilterResult";
    Map<String, JsonNode> f =
        fields(json, t, "Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error");
    return new ExtenderFilterResult(
        object(f, t, "Nodes"),
        stringList(f, t, "NodeNames"),
        stringMap(f, t, "FailedNodes"),
        stringMap(f, t, "FailedAndUnresolvableNodes"),
        string(f, t, "Error"));
  }

  /**
   * Decodes a bind request body.
   *
   * @param json UTF-8 JSON
   * @return the arguments; absent or null keys are ""
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
   * Decodes a bind response body.
   *
   * @param json UTF-8 JSON
   * @return the result; an absent or null {@code Error} is ""
   * @throws ExtenderJsonException on bad JSON or a non-string {@code Error}
   */
  public static ExtenderBindingResult decodeBindingResult(byte[] json)
      throws ExtenderJsonException {
    Map<String, JsonNode> f = fields(json, "ExtenderBindingResult", "Error");
    return new ExtenderBindingResult(string(f, "ExtenderBindingResult", "Error"));
  }

  /**
   * Decodes a preempt request body.
   *
   * @param json UTF-8 JSON
   * @return the arguments
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
        map(f, t + ".NodeNameToVictims", "NodeNameToVictims", ExtenderJson::victims),
        map(f, t + ".NodeNameToMetaVictims", "NodeNameToMetaVictims", ExtenderJson::metaVictims));
  }

  /**
   * Decodes a preempt response body (for embedders acting as kube-scheduler, and tests).
   *
   * @param json UTF-8 JSON
   * @return the result
   * @throws ExtenderJsonException as {@link #decodePreemptionArgs}
   */
  public static ExtenderPreemptionResult decodePreemptionResult(byte[] json)
      throws ExtenderJsonException {
    String t = "ExtenderPreemptionResult";
    Map<String, JsonNode> f = fields(json, t, "NodeNameToMetaVictims");
    return new ExtenderPreemptionResult(
        map(f, t + ".NodeNameToMetaVictims", "NodeNameToMetaVictims", ExtenderJson::metaVictims));
  }

  private interface Decoder<T> {
    T decode(JsonNode n, String field) throws ExtenderJsonException;
  }

  /** A Go map of struct pointers: an object whose values are objects (null values refused). */
  private static <T> Optional<Map<String, T>> map(
      Map<String, JsonNode> f, String field, String name, Decoder<T> values)
      throws ExtenderJsonException {
    JsonNode n = f.get(name);
    if (n == null || n.isNull()) {
      return Optional.empty();
    }
    if (!n.isObject()) {
      throw new ExtenderJsonException(
          field, "expected an object or null, got " + n.getNodeType(), null);
    }
    Map<String, T> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      String at = field + "[\"" + e.getKey() + "\"]";
      if (!e.getValue().isObject()) {
        throw new ExtenderJsonException(
            at, "expected an object, got " + e.getValue().getNodeType(), null);
      }
      out.put(e.getKey(), values.decode(e.getValue(), at));
    }
    return Optional.of(out);
  }

  private static Victims victims(JsonNode n, String field) throws ExtenderJsonException {
    Map<String, JsonNode> f = fields(n, field, "Pods", "NumPDBViolations");
    List<ObjectNode> pods = new ArrayList<>();
    for (JsonNode p : array(f, field, "Pods")) {
      if (!p.isObject()) {
        throw new ExtenderJsonException(
            field + ".Pods[" + pods.size() + "]",
            "expected a Pod object, got " + p.getNodeType(),
            null);
      }
      pods.add((ObjectNode) p);
    }
    return new Victims(pods, int64(f, field, "NumPDBViolations"));
  }

  private static MetaVictims metaVictims(JsonNode n, String field) throws ExtenderJsonException {
    Map<String, JsonNode> f = fields(n, field, "Pods", "NumPDBViolations");
    List<MetaPod> pods = new ArrayList<>();
    for (JsonNode p : array(f, field, "Pods")) {
      String at = field + ".Pods[" + pods.size() + "]";
      if (!p.isObject()) {
        throw new ExtenderJsonException(
            at, "expected a MetaPod object, got " + p.getNodeType(), null);
      }
      pods.add(new MetaPod(string(fields(p, at, "UID"), at, "UID")));
    }
    return new MetaVictims(pods, int64(f, field, "NumPDBViolations"));
  }

  private static List<JsonNode> array(Map<String, JsonNode> f, String field, String name)
      throws ExtenderJsonException {
    JsonNode n = f.get(name);
    if (n == null || n.isNull()) {
      return List.of();
    }
    if (!n.isArray()) {
      throw new ExtenderJsonException(
          field + "." + name, "expected an array or null, got " + n.getNodeType(), null);
    }
    List<JsonNode> out = new ArrayList<>();
    n.forEach(out::add);
    return out;
  }

  /** Go int64: an integral JSON number in range; null or absent is 0. */
  private static long int64(Map<String, JsonNode> f, String field, String name)
      throws ExtenderJsonException {
    JsonNode n = f.get(name);
    if (n == null || n.isNull()) {
      return 0;
    }
    if (!n.isIntegralNumber() || !n.canConvertToLong()) {
      throw new ExtenderJsonException(
          field + "." + name, "expected a Go int64, got " + n.getNodeType() + " " + n, null);
    }
    return n.longValue();
  }

  /**
   * Parses any JSON document into a tree (used for Pod and Node objects in tests and tools).
   *
   * @param json UTF-8 JSON
   * @return the tree
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
    JsonNode n = f.get(name);
    if (n == null || n.isNull()) {
      return Optional.empty();
    }
    if (!n.isObject()) {
      throw new ExtenderJsonException(
          type + "." + name, "expected an object or null, got " + n.getNodeType(), null);
    }
    return Optional.of((ObjectNode) n);
  }

  private static Optional<List<String>> stringList(
      Map<String, JsonNode> f, String type, String name) throws ExtenderJsonException {
    JsonNode n = f.get(name);
    if (n == null || n.isNull()) {
      return Optional.empty();
    }
    if (!n.isArray()) {
      throw new ExtenderJsonException(
          type + "." + name, "expected an array of strings or null, got " + n.getNodeType(), null);
    }
    List<String> out = new ArrayList<>(n.size());
    for (int i = 0; i < n.size(); i++) {
      JsonNode s = n.get(i);
      if (!s.isTextual()) {
        throw new ExtenderJsonException(
            type + "." + name + "[" + i + "]",
            "expected a string, got " + s.getNodeType() + " " + s,
            null);
      }
      out.add(s.textValue());
    }
    return Optional.of(out);
  }

  private static Optional<Map<String, String>> stringMap(
      Map<String, JsonNode> f, String type, String name) throws ExtenderJsonException {
    JsonNode n = f.get(name);
    if (n == null || n.isNull()) {
      return Optional.empty();
    }
    if (!n.isObject()) {
      throw new ExtenderJsonException(
          type + "." + name, "expected an object of strings or null, got " + n.getNodeType(), null);
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      if (!e.getValue().isTextual()) {
        throw new ExtenderJsonException(
            type + "." + name + "[\"" + e.getKey() + "\"]",
            "expected a string, got " + e.getValue().getNodeType(),
            null);
      }
      out.put(e.getKey(), e.getValue().textValue());
    }
    return Optional.of(out);
  }

  private static String string(Map<String, JsonNode> f, String type, String name)
      throws ExtenderJsonException {
    JsonNode n = f.get(name);
    if (n == null || n.isNull()) {
      return "";
    }
    if (!n.isTextual()) {
      throw new ExtenderJsonException(
          type + "." + name, "expected a string, got " + n.getNodeType() + " " + n, null);
    }
    return n.textValue();
  }

  // ------------------------------------------------------------------------------- encoding

  /**
   * Encodes filter arguments as kube-scheduler does.
   *
   * @param args the arguments
   * @return e.g. {@code {"Pod":{…},"Nodes":null,"NodeNames":["node-a"]}}
   */
  public static String encode(ExtenderArgs args) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeFieldName("Pod");
          writeTree(g, args.pod());
          g.writeFieldName("Nodes");
          writeTree(g, args.nodes());
          g.writeFieldName("NodeNames");
          writeList(g, args.nodeNames());
          g.writeEndObject();
        });
  }

  /**
   * Encodes a filter result byte-exactly as Go's {@code json.Marshal} (fixture F-82).
   *
   * @param r the result
   * @return e.g. {@code
   *     {"Nodes":null,"NodeNames":["node-a"],"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":""}}
   */
  public static String encode(ExtenderFilterResult r) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeFieldName("Nodes");
          writeTree(g, r.nodes());
          g.writeFieldName("NodeNames");
          writeList(g, r.nodeNames());
          g.writeFieldName("FailedNodes");
          writeMap(g, r.failedNodes());
          g.writeFieldName("FailedAndUnresolvableNodes");
          writeMap(g, r.failedAndUnresolvableNodes());
          g.writeStringField("Error", r.error());
          g.writeEndObject();
        });
  }

  /**
   * Encodes bind arguments as kube-scheduler does.
   *
   * @param a the arguments
   * @return e.g. {@code {"PodName":"p","PodNamespace":"default","PodUID":"…","Node":"node-a"}}
   */
  public static String encode(ExtenderBindingArgs a) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeStringField("PodName", a.podName());
          g.writeStringField("PodNamespace", a.podNamespace());
          g.writeStringField("PodUID", a.podUID());
          g.writeStringField("Node", a.node());
          g.writeEndObject();
        });
  }

  /**
   * Encodes a bind result as HAMi does.
   *
   * @param r the result
   * @return {@code {"Error":"…"}}
   */
  public static String encode(ExtenderBindingResult r) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeStringField("Error", r.error());
          g.writeEndObject();
        });
  }

  /**
   * Encodes preempt arguments as kube-scheduler does.
   *
   * @param a the arguments
   * @return e.g. {@code
   *     {"Pod":{…},"NodeNameToVictims":null,"NodeNameToMetaVictims":{"node-a":{"Pods":[{"UID":"u1"}],"NumPDBViolations":0}}}}
   */
  public static String encode(ExtenderPreemptionArgs a) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeFieldName("Pod");
          writeTree(g, a.pod());
          g.writeFieldName("NodeNameToVictims");
          writeVictims(
              g,
              a.nodeNameToVictims(),
              (v, w) -> {
                for (ObjectNode p : v.pods()) {
                  MAPPER.writeTree(w, p);
                }
              },
              Victims::numPDBViolations);
          g.writeFieldName("NodeNameToMetaVictims");
          writeMetaVictims(g, a.nodeNameToMetaVictims());
          g.writeEndObject();
        });
  }

  /**
   * Encodes a preempt result byte-exactly as Go's {@code json.Marshal}.
   *
   * @param r the result
   * @return e.g. {@code
   *     {"NodeNameToMetaVictims":{"node-a":{"Pods":[{"UID":"u1"}],"NumPDBViolations":0}}}}
   */
  public static String encode(ExtenderPreemptionResult r) {
    return write(
        g -> {
          g.writeStartObject();
          g.writeFieldName("NodeNameToMetaVictims");
          writeMetaVictims(g, r.nodeNameToMetaVictims());
          g.writeEndObject();
        });
  }

  private interface Pods<V> {
    void write(V victims, JsonGenerator g) throws IOException;
  }

  private static void writeMetaVictims(JsonGenerator g, Optional<Map<String, MetaVictims>> m)
      throws IOException {
    writeVictims(
        g,
        m,
        (v, w) -> {
          for (MetaPod p : v.pods()) {
            w.writeStartObject();
            w.writeStringField("UID", p.uid());
            w.writeEndObject();
          }
        },
        MetaVictims::numPDBViolations);
  }

  private static <V> void writeVictims(
      JsonGenerator g,
      Optional<Map<String, V>> m,
      Pods<V> pods,
      java.util.function.ToLongFunction<V> violations)
      throws IOException {
    if (m.isEmpty()) {
      g.writeNull();
      return;
    }
    g.writeStartObject();
    for (Map.Entry<String, V> e : m.get().entrySet()) { // sorted by the record
      g.writeFieldName(e.getKey());
      g.writeStartObject();
      g.writeFieldName("Pods");
      g.writeStartArray();
      pods.write(e.getValue(), g);
      g.writeEndArray();
      g.writeNumberField("NumPDBViolations", violations.applyAsLong(e.getValue()));
      g.writeEndObject();
    }
    g.writeEndObject();
  }

  private interface Body {
    void write(JsonGenerator g) throws IOException;
  }

  private static String write(Body body) {
    StringWriter w = new StringWriter(256);
    try (JsonGenerator g = MAPPER.createGenerator(w)) {
      g.setCharacterEscapes(GO_ESCAPES);
      body.write(g);
    } catch (IOException e) {
      throw new UncheckedIOException("writing JSON to a string cannot fail", e);
    }
    return w.toString();
  }

  private static void writeTree(JsonGenerator g, Optional<ObjectNode> n) throws IOException {
    if (n.isEmpty()) {
      g.writeNull();
    } else {
      MAPPER.writeTree(g, n.get());
    }
  }

  private static void writeList(JsonGenerator g, Optional<List<String>> l) throws IOException {
    if (l.isEmpty()) {
      g.writeNull();
      return;
    }
    g.writeStartArray();
    for (String s : l.get()) {
      g.writeString(s);
    }
    g.writeEndArray();
  }

  private static void writeMap(JsonGenerator g, Optional<Map<String, String>> m)
      throws IOException {
    if (m.isEmpty()) {
      g.writeNull();
      return;
    }
    g.writeStartObject();
    for (Map.Entry<String, String> e : m.get().entrySet()) { // sorted by the record
      g.writeStringField(e.getKey(), e.getValue());
    }
    g.writeEndObject();
  }

  /**
   * Go's default escaping: {@code < > &}, U+2028, U+2029 and control characters other than {@code
   * \b \f \n \r \t} as <code>&#92;u00xx</code> with lower-case hex, like {@code encoding/json}.
   */
  private static final class GoEscapes extends CharacterEscapes {
    private static final long serialVersionUID = 1L;
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private final int[] ascii;

    GoEscapes() {
      ascii = standardAsciiEscapesForJSON();
      for (int c = 0; c < 0x20; c++) {
        if (c != '\b' && c != '\f' && c != '\n' && c != '\r' && c != '\t') {
          ascii[c] = ESCAPE_CUSTOM;
        }
      }
      ascii['<'] = ESCAPE_CUSTOM;
      ascii['>'] = ESCAPE_CUSTOM;
      ascii['&'] = ESCAPE_CUSTOM;
    }

    @Override
    public int[] getEscapeCodesForAscii() {
      return ascii;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
      if (ch < 0x80 || ch == 0x2028 || ch == 0x2029) {
        if (ch < 0x80 && ascii[ch] != ESCAPE_CUSTOM) {
          return null;
        }
        return new SerializedString(
            "\\u"
                + HEX[(ch >> 12) & 0xf]
                + HEX[(ch >> 8) & 0xf]
                + HEX[(ch >> 4) & 0xf]
                + HEX[ch & 0xf]);
      }
      return null;
    }
  }
}
