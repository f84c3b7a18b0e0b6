package dev.hamilock.device.spi.codec;

/** Go {@code strconv} parsing; {@link NumberFormatException}s carry Go's exact error texts. */
final class GoStrconv {
  private GoStrconv() {}

  /**
   * Go {@code strconv.ParseInt(s, 10, 32)} ({@code fn} names the Go function in errors): optional
   * sign, decimal digits only; a non-digit anywhere is a syntax error, else a value beyond int32 is
   * out of range.
   */
  static int parseInt32(String fn, String s) {
    boolean neg = s.startsWith("-");
    int i = neg || s.startsWith("+") ? 1 : 0;
    if (s.length() == i) {
      throw syntax(fn, s);
    }
    long acc = 0;
    for (; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        throw syntax(fn, s);
      }
      acc = Math.min(acc * 10 + (c - '0'), 1L << 32); // clamped: beyond int32 either way
    }
    if (acc > (neg ? 1L << 31 : Integer.MAX_VALUE)) {
      throw new NumberFormatException(
          "strconv." + fn + ": parsing " + quote(s) + ": value out of range");
    }
    return (int) (neg ? -acc : acc);
  }

  /** Go {@code strconv}'s syntax error of function {@code fn} for {@code s}. */
  static NumberFormatException syntax(String fn, String s) {
    return new NumberFormatException(
        "strconv." + fn + ": parsing " + quote(s) + ": invalid syntax");
  }

  /** Go {@code strconv.Quote} for the characters that occur in annotation text. */
  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default ->
            b.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : String.valueOf(c));
      }
    }
    return b.append('"').toString();
  }
}
