package dev.hamilock.preflight.manifest;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Null-safe navigation of the generic values in a {@link ManifestDocument}. None of these methods
 * throws on a value of the wrong shape: a wrong shape reads as absent.
 */
public final class Values {

  private Values() {}

  /**
   * Walks nested mappings.
   *
   * @param node a mapping (or anything; other shapes yield {@code null})
   * @param keys keys to follow
   * @return the value at the end of the walk, or {@code null} if any step is missing or not a
   *     mapping
   */
  public static Object at(Object node, String... keys) {
    Object cur = node;
    for (String key : keys) {
      if (!(cur instanceof Map<?, ?> m)) {
        return null;
      }
      cur = m.get(key);
    }
    return cur;
  }

  /**
   * @param node any value
   * @return the value as a mapping with string keys, or empty if it is not a mapping
   */
  @SuppressWarnings("unchecked")
  public static Optional<Map<String, Object>> map(Object node) {
    return node instanceof Map<?, ?> m ? Optional.of((Map<String, Object>) m) : Optional.empty();
  }

  /**
   * @param node any value
   * @return the value as a list, or an empty list if it is not a sequence
   */
  @SuppressWarnings("unchecked")
  public static List<Object> list(Object node) {
    return node instanceof List<?> l ? (List<Object>) l : List.of();
  }

  /**
   * @param node any value
   * @return the value as a non-blank string (scalars of other types in their YAML text form, e.g.
   *     {@code 3000} for an unquoted integer), or empty for null, blank or non-scalars
   */
  public static Optional<String> string(Object node) {
    String s = scalarText(node);
    return s == null || s.isBlank() ? Optional.empty() : Optional.of(s);
  }

  /**
   * @param node any value
   * @return the scalar's text ({@code BigDecimal} in plain notation), or {@code null} for null and
   *     non-scalars
   */
  public static String scalarText(Object node) {
    if (node instanceof String s) {
      return s;
    }
    if (node instanceof BigDecimal d) {
      return d.toPlainString();
    }
    if (node instanceof Number || node instanceof Boolean) {
      return node.toString();
    }
    return null;
  }

  /**
   * @param node any value
   * @return the value as an int when it is an integer (or a string holding one) within int range
   */
  public static OptionalInt integer(Object node) {
    if (node instanceof Long l && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE) {
      return OptionalInt.of(l.intValue());
    }
    if (node instanceof String s) {
      try {
        return OptionalInt.of(Integer.parseInt(s.trim()));
      } catch (NumberFormatException e) {
        return OptionalInt.empty();
      }
    }
    return OptionalInt.empty(); // BigInteger, fractions, other shapes
  }

  /**
   * @param node any value
   * @return a mapping's scalar entries as strings (non-scalar entries are left out), in order;
   *     empty if the value is not a mapping
   */
  public static Map<String, String> stringMap(Object node) {
    if (!(node instanceof Map<?, ?> m)) {
      return Map.of();
    }
    Map<String, String> out = new LinkedHashMap<>();
    m.forEach(
        (k, v) -> {
          String text = v == null ? "" : scalarText(v);
          if (text != null) {
            out.put(String.valueOf(k), text);
          }
        });
    return Collections.unmodifiableMap(out);
  }

  /**
   * @param node any value
   * @return the string elements of a sequence (non-scalars left out), or an empty list
   */
  public static List<String> strings(Object node) {
    List<String> out = new ArrayList<>();
    for (Object o : list(node)) {
      String s = scalarText(o);
      if (s != null) {
        out.add(s);
      }
    }
    return List.copyOf(out);
  }
}
