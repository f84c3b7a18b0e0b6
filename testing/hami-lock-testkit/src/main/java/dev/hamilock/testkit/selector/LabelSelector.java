package dev.hamilock.testkit.selector;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A parsed Kubernetes label selector (the {@code labelSelector} query parameter), following the
 * grammar of {@code k8s.io/apimachinery/pkg/labels/selector.go}: comma-separated requirements
 * {@code key}, {@code !key}, {@code key=v}, {@code key==v}, {@code key!=v}, {@code key in (a,b)},
 * {@code key notin (a,b)}, {@code key>N}, {@code key<N}.
 *
 * <p>Keys must be qualified names ({@code [prefix/]name}, name at most 63 characters), values valid
 * label values (at most 63 characters, alphanumeric at both ends). Instances are immutable.
 */
public final class LabelSelector {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
  private static final Pattern DNS1123_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /** The selector that matches everything. */
  public static final LabelSelector EVERYTHING = new LabelSelector(List.of(), "");

  private enum Op {
    EXISTS,
    NOT_EXISTS,
    EQUALS,
    NOT_EQUALS,
    IN,
    NOT_IN,
    GT,
    LT
  }

  private record Requirement(String key, Op op, Set<String> values) {
    boolean matches(Map<String, String> labels) {
      String v = labels.get(key);
      return switch (op) {
        case EXISTS -> v != null;
        case NOT_EXISTS -> v == null;
        case EQUALS, IN -> v != null && values.contains(v);
        case NOT_EQUALS, NOT_IN -> v == null || !values.contains(v);
        case GT, LT -> {
          if (v == null) {
            yield false;
          }
          long have;
          try {
            have = Long.parseLong(v);
          } catch (NumberFormatException e) {
            yield false;
          }
          long want = Long.parseLong(values.iterator().next());
          yield op == Op.GT ? have > want : have < want;
        }
      };
    }
  }

  private final List<Requirement> requirements;
  private final String text;

  private LabelSelector(List<Requirement> requirements, String text) {
    this.requirements = requirements;
    this.text = text;
  }

  /**
   * Parses a selector.
   *
   * @param selector the selector text; null or blank selects everything
   * @throws SelectorParseException naming the bad requirement, key or value
   */
  public static LabelSelector parse(String selector) throws SelectorParseException {
    if (selector == null || selector.isBlank()) {
      return EVERYTHING;
    }
    return new LabelSelector(List.copyOf(new Parser(selector).parse()), selector);
  }

  /**
   * @param labels the object's labels; not null
   * @return whether every requirement holds
   */
  public boolean matches(Map<String, String> labels) {
    Objects.requireNonNull(labels, "labels");
    for (Requirement r : requirements) {
      if (!r.matches(labels)) {
        return false;
      }
    }
    return true;
  }

  /**
   * @return whether this selector has no requirement
   */
  public boolean isEverything() {
    return requirements.isEmpty();
  }

  @Override
  public String toString() {
    return text;
  }

  private static final class Parser {
    private final String s;
    private int pos;

    Parser(String s) {
      this.s = s;
    }

    private enum T {
      ID,
      EQ,
      DEQ,
      NEQ,
      NOT,
      IN,
      NOTIN,
      OPEN,
      CLOSE,
      COMMA,
      GT,
      LT,
      END
    }

    private record Tok(T t, String text) {}

    private Tok peekTok;

    private Tok next() {
      if (peekTok != null) {
        Tok t = peekTok;
        peekTok = null;
        return t;
      }
      while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
        pos++;
      }
      if (pos >= s.length()) {
        return new Tok(T.END, "");
      }
      char c = s.charAt(pos);
      switch (c) {
        case '!':
          if (pos + 1 < s.length() && s.charAt(pos + 1) == '=') {
            pos += 2;
            return new Tok(T.NEQ, "!=");
          }
          pos++;
          return new Tok(T.NOT, "!");
        case '=':
          if (pos + 1 < s.length() && s.charAt(pos + 1) == '=') {
            pos += 2;
            return new Tok(T.DEQ, "==");
          }
          pos++;
          return new Tok(T.EQ, "=");
        case '(':
          pos++;
          return new Tok(T.OPEN, "(");
        case ')':
          pos++;
          return new Tok(T.CLOSE, ")");
        case ',':
          pos++;
          return new Tok(T.COMMA, ",");
        case '>':
          pos++;
          return new Tok(T.GT, ">");
        case '<':
          pos++;
          return new Tok(T.LT, "<");
        default:
          int start = pos;
          while (pos < s.length()
              && !Character.isWhitespace(s.charAt(pos))
              && "!=(),<>".indexOf(s.charAt(pos)) < 0) {
            pos++;
          }
          String id = s.substring(start, pos);
          if (id.equals("in")) {
            return new Tok(T.IN, id);
          }
          if (id.equals("notin")) {
            return new Tok(T.NOTIN, id);
          }
          return new Tok(T.ID, id);
      }
    }

    private Tok peek() {
      if (peekTok == null) {
        peekTok = next();
      }
      return peekTok;
    }

    List<Requirement> parse() throws SelectorParseException {
      List<Requirement> out = new ArrayList<>();
      while (true) {
        out.add(requirement());
        Tok t = next();
        if (t.t == T.END) {
          return out;
        }
        if (t.t != T.COMMA) {
          throw new SelectorParseException(
              "found '"
                  + t.text
                  + "', expected: ',' or 'end of string'"
                  + " in label selector \""
                  + s
                  + "\"");
        }
      }
    }

    private Requirement requirement() throws SelectorParseException {
      Tok t = next();
      if (t.t == T.NOT) {
        Tok key = next();
        if (key.t != T.ID) {
          throw new SelectorParseException(
              "found '"
                  + key.text
                  + "', expected: identifier after '!'"
                  + " in label selector \""
                  + s
                  + "\"");
        }
        validateKey(key.text);
        return new Requirement(key.text, Op.NOT_EXISTS, Set.of());
      }
      if (t.t != T.ID) {
        throw new SelectorParseException(
            "found '"
                + t.text
                + "', expected: !, identifier, or"
                + " 'end of string' in label selector \""
                + s
                + "\"");
      }
      String key = t.text;
      validateKey(key);
      Tok op = peek();
      if (op.t == T.END || op.t == T.COMMA) {
        return new Requirement(key, Op.EXISTS, Set.of());
      }
      next();
      switch (op.t) {
        case EQ, DEQ, NEQ -> {
          Tok v = peek();
          String value = "";
          if (v.t == T.ID) {
            next();
            value = v.text;
          } else if (v.t != T.END && v.t != T.COMMA) {
            throw new SelectorParseException(
                "found '"
                    + v.text
                    + "', expected: identifier"
                    + " in label selector \""
                    + s
                    + "\"");
          }
          validateValue(value);
          return new Requirement(key, op.t == T.NEQ ? Op.NOT_EQUALS : Op.EQUALS, Set.of(value));
        }
        case IN, NOTIN -> {
          Tok open = next();
          if (open.t != T.OPEN) {
            throw new SelectorParseException(
                "found '" + open.text + "', expected: '(' in label" + " selector \"" + s + "\"");
          }
          Set<String> values = new LinkedHashSet<>();
          while (true) {
            Tok v = next();
            String value;
            if (v.t == T.ID) {
              value = v.text;
              v = next();
            } else {
              value = "";
            }
            validateValue(value);
            values.add(value);
            if (v.t == T.CLOSE) {
              break;
            }
            if (v.t != T.COMMA) {
              throw new SelectorParseException(
                  "found '"
                      + v.text
                      + "', expected: ',' or ')' in"
                      + " label selector \""
                      + s
                      + "\"");
            }
          }
          return new Requirement(key, op.t == T.IN ? Op.IN : Op.NOT_IN, Set.copyOf(values));
        }
        case GT, LT -> {
          Tok v = next();
          try {
            Long.parseLong(v.text);
          } catch (NumberFormatException e) {
            throw new SelectorParseException(
                "for 'Gt', 'Lt' operators, the value must be an"
                    + " integer: \""
                    + v.text
                    + "\" in label selector \""
                    + s
                    + "\"");
          }
          return new Requirement(key, op.t == T.GT ? Op.GT : Op.LT, Set.of(v.text));
        }
        default ->
            throw new SelectorParseException(
                "found '"
                    + op.text
                    + "', expected: =, !=, =="
                    + ", in, notin in label selector \""
                    + s
                    + "\"");
      }
    }

    private void validateKey(String key) throws SelectorParseException {
      String name = key;
      int slash = key.indexOf('/');
      if (slash >= 0) {
        String prefix = key.substring(0, slash);
        name = key.substring(slash + 1);
        if (prefix.isEmpty()
            || prefix.length() > 253
            || !DNS1123_SUBDOMAIN.matcher(prefix).matches()) {
          throw new SelectorParseException(
              "unable to parse requirement: invalid label key \""
                  + key
                  + "\": prefix part must be a lowercase RFC 1123 subdomain");
        }
      }
      if (name.isEmpty() || name.length() > 63 || !NAME.matcher(name).matches()) {
        throw new SelectorParseException(
            "unable to parse requirement: invalid label key \""
                + key
                + "\": name part must consist of alphanumeric characters, '-', '_' or '.', and must"
                + " start and end with an alphanumeric character (at most 63 characters)");
      }
    }

    private void validateValue(String value) throws SelectorParseException {
      if (value.isEmpty()) {
        return;
      }
      if (value.length() > 63 || !NAME.matcher(value).matches()) {
        throw new SelectorParseException(
            "unable to parse requirement: invalid label value: \""
                + value
                + "\": a valid label must be an empty string or consist of alphanumeric"
                + " characters, '-', '_' or '.', and must start and end with an alphanumeric"
                + " character (at most 63 characters)");
      }
    }
  }
}
