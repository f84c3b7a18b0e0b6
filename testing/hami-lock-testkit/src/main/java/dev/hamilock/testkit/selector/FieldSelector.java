package dev.hamilock.testkit.selector;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * A parsed Kubernetes field selector (the {@code fieldSelector} query parameter), following {@code
 * k8s.io/apimachinery/pkg/fields/selector.go}: comma-separated terms {@code f=v}, {@code f==v},
 * {@code f!=v}; a backslash escapes {@code ,}, {@code =}, {@code !} and itself. Instances are
 * immutable.
 */
public final class FieldSelector {
  /** The selector that matches everything. */
  public static final FieldSelector EVERYTHING = new FieldSelector(List.of(), "");

  private record Term(String field, boolean equal, String value) {}

  private final List<Term> terms;
  private final String text;

  private FieldSelector(List<Term> terms, String text) {
    this.terms = terms;
    this.text = text;
  }

  /**
   * Parses a selector.
   *
   * @param selector the selector text; null or blank selects everything
   * @throws SelectorParseException for a term without an operator, naming the term
   */
  public static FieldSelector parse(String selector) throws SelectorParseException {
    if (selector == null || selector.isBlank()) {
      return EVERYTHING;
    }
    List<Term> terms = new ArrayList<>();
    for (String raw : split(selector)) {
      if (raw.isEmpty()) {
        continue;
      }
      terms.add(term(raw, selector));
    }
    return new FieldSelector(List.copyOf(terms), selector);
  }

  private static List<String> split(String s) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        cur.append(c).append(s.charAt(++i));
      } else if (c == ',') {
        out.add(cur.toString());
        cur.setLength(0);
      } else {
        cur.append(c);
      }
    }
    out.add(cur.toString());
    return out;
  }

  private static Term term(String raw, String whole) throws SelectorParseException {
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '\\') {
        i++;
        continue;
      }
      String rest = raw.substring(i);
      for (String op : new String[] {"!=", "==", "="}) {
        if (rest.startsWith(op)) {
          String field = unescape(raw.substring(0, i)).trim();
          String value = unescape(raw.substring(i + op.length()));
          return new Term(field, !op.equals("!="), value);
        }
      }
    }
    throw new SelectorParseException(
        "invalid selector: '" + whole + "'; can't understand '" + raw + "'");
  }

  private static String unescape(String s) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        sb.append(s.charAt(++i));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  /**
   * Checks that every field this selector names is in {@code supported}.
   *
   * @param supported field paths the resource supports, e.g. {@code metadata.name}
   * @throws SelectorParseException {@code field label not supported: <field>} for the first
   *     unsupported field (the apiserver's 400 message)
   */
  public void requireSupported(Set<String> supported) throws SelectorParseException {
    for (Term t : terms) {
      if (!supported.contains(t.field)) {
        throw new SelectorParseException("field label not supported: " + t.field);
      }
    }
  }

  /**
   * @param fields the object's selectable fields by path; a missing field reads as {@code ""}
   * @return whether every term holds
   */
  public boolean matches(Function<String, String> fields) {
    Objects.requireNonNull(fields, "fields");
    for (Term t : terms) {
      String v = fields.apply(t.field);
      boolean eq = (v == null ? "" : v).equals(t.value);
      if (eq != t.equal) {
        return false;
      }
    }
    return true;
  }

  /**
   * @param fields the object's fields by path
   * @return whether every term holds
   */
  public boolean matches(Map<String, String> fields) {
    return matches(fields::get);
  }

  /**
   * @return whether this selector has no term
   */
  public boolean isEverything() {
    return terms.isEmpty();
  }

  @Override
  public String toString() {
    return text;
  }
}
