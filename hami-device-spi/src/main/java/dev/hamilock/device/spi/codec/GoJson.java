package dev.hamilock.device.spi.codec;

/** Go {@code encoding/json} string encoding (HTML-safe escaping, as Go's default encoder). */
final class GoJson {
  private GoJson() {}

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /** Appends {@code s} as a Go-encoded JSON string literal, quotes included. */
  static void appendString(StringBuilder b, String s) {
    b.append('"');
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          b.append("\\\"");
          break;
        case '\\':
          b.append("\\\\");
          break;
        case '\n':
          b.append("\\n");
          break;
        case '\r':
          b.append("\\r");
          break;
        case '\t':
          b.append("\\t");
          break;
        case '\b':
          b.append("\\b");
          break;
        case '\f':
          b.append("\\f");
          break;
        case '<':
        case '>':
        case '&':
        case '\u2028':
        case '\u2029':
          unicode(b, c);
          break;
        default:
          if (c < 0x20) {
            unicode(b, c);
          } else if (Character.isHighSurrogate(c)) {
            if (i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
              b.append(c).append(s.charAt(++i));
            } else {
              b.append("\\ufffd");
            }
          } else if (Character.isLowSurrogate(c)) {
            b.append("\\ufffd");
          } else {
            b.append(c);
          }
      }
    }
    b.append('"');
  }

  private static void unicode(StringBuilder b, char c) {
    b.append("\\u")
        .append(HEX[(c >> 12) & 0xf])
        .append(HEX[(c >> 8) & 0xf])
        .append(HEX[(c >> 4) & 0xf])
        .append(HEX[c & 0xf]);
  }
}
