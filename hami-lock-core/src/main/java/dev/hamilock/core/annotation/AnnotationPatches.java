package dev.hamilock.core.annotation;

import java.util.Objects;

/**
 * The request bodies of the Node-annotation lock, byte for byte the same for every client (the
 * wire-conformance vectors judge them): JSON Patch (RFC 6902) with a {@code test} before each
 * write, and a JSON merge patch (RFC 7386) for a node without annotations map. Strings are escaped
 * as Gson's {@code JsonElement.toString()} (client-java's codec) escapes them.
 */
public final class AnnotationPatches {

  private AnnotationPatches() {}

  /**
   * JSON-pointer path of an annotation (RFC 6901), e.g. {@code
   * /metadata/annotations/hami.io~1mutex.lock}.
   *
   * @throws NullPointerException if {@code key} is null
   */
  public static String pointer(String key) {
    Objects.requireNonNull(key, "key");
    return "/metadata/annotations/" + key.replace("~", "~0").replace("/", "~1");
  }

  /**
   * {@return {@code [{"op":"test","path":P,"value":null},{"op":"add","path":P,"value":V}]}}: an
   * acquire-if-free, as kube-apiserver's JSON-patch library treats an absent member as {@code
   * null}.
   */
  public static String create(String key, String value) {
    return "[" + op("test", key, "null") + "," + op("add", key, quote(value)) + "]";
  }

  /** {@link #create} behind {@code {"op":"test","path":"/metadata/resourceVersion","value":RV}}. */
  public static String createAt(String key, String value, String resourceVersion) {
    String version = "{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":%s}";
    return "[" + version.formatted(quote(resourceVersion)) + "," + create(key, value).substring(1);
  }

  /** {@return {@code [{"op":"test",…,"value":OLD},{"op":"replace",…,"value":NEW}]}} */
  public static String replace(String key, String expected, String value) {
    return "[" + op("test", key, quote(expected)) + "," + op("replace", key, quote(value)) + "]";
  }

  /** {@return {@code [{"op":"test",…,"value":V},{"op":"remove","path":P}]}} */
  public static String delete(String key, String expected) {
    return "[" + op("test", key, quote(expected)) + "," + op("remove", key, null) + "]";
  }

  /** {@return {@code {"metadata":{"annotations":{K:V},"resourceVersion":RV}}}} */
  public static String mergeCreate(String key, String value, String resourceVersion) {
    return "{\"metadata\":{\"annotations\":{%s:%s},\"resourceVersion\":%s}}"
        .formatted(quote(key), quote(value), quote(resourceVersion));
  }

  private static String op(String op, String key, String jsonValue) {
    String value = jsonValue == null ? "" : ",\"value\":" + jsonValue;
    return "{\"op\":\"%s\",\"path\":%s%s}".formatted(op, quote(pointer(key)), value);
  }

  /** {@code s} as a JSON string literal, escaped as Gson escapes it. */
  static String quote(String s) {
    Objects.requireNonNull(s, "string");
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20 || c == '\u2028' || c == '\u2029') {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
