package dev.hamilock.device.spi.codec;

/**
 * Go {@code strconv} parsing with Go's exact error texts (used so that our error messages match
 * HAMi's byte for byte). Errors are {@link NumberFormatException}s carrying the Go message.
 */
final class GoStrconv {
  private GoStrconv() {}

  /** Go {@code strconv.ParseInt(s, 10, bits)}: optional sign, decimal digits only. */
  static long parseInt(String fn, String s, int bits) {
    int n = s.length();
    if (n == 0) {
      throw syntax(fn, s);
    }
    int i = 0;
    boolean neg = false;
    if (s.charAt(0) == '+' || s.charAt(0) == '-') {
      neg = s.charAt(0) == '-';
      i = 1;
      if (n == 1) {
        throw syntax(fn, s);
      }
    }
    long max = bits == 64 ? Long.MAX_VALUE : (1L << (bits - 1)) - 1;
    long acc = 0;
    boolean overflow = false;
    for (; i < n; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        throw syntax(fn, s);
      }
      int d = c - '0';
      if (!overflow) {
        if (acc > (Long.MAX_VALUE - d) / 10) {
          overflow = true;
        } else {
          acc = acc * 10 + d;
          if (acc > max + 1) {
            overflow = true;
          }
        }
      }
    }
    if (overflow || (!neg && acc > max)) {
      throw new NumberFormatException(
          "strconv." + fn + ": parsing " + quote(s) + ": value out of range");
    }
    return neg ? -acc : acc;
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
