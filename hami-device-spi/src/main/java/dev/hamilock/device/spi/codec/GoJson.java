package dev.hamilock.device.spi.codec;

/** Go {@code encoding/json} string encoding (HTML-safe escaping, as Go's default encoder). */
final class GoJson {
  private GoJson() {}

  /** Appends {@code s} as a Go-encoded JSON string literal, quotes included. */
  static void appendString(StringBuilder b, String s) {
    b.append('"');
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        case '<', '>', '&', '\u2028', '\u2029' -> unicode(b, c);
        default -> {
          if (c < 0x20) {
            unicode(b, c);
          } else if (Character.isHighSurrogate(c)
              && i + 1 < n
              && Character.isLowSurrogate(s.charAt(i + 1))) {
            b.append(c).append(s.charAt(++i));
          } else {
            b.append(Character.isSurrogate(c) ? "\\ufffd" : String.valueOf(c));
          }
        }
      }
    }
    b.append('"');
  }

  private static void unicode(StringBuilder b, char c) {
    b.append(String.format("\\u%04x", (int) c));
  }
}
