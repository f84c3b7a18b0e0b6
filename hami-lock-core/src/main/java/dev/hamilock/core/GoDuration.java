package dev.hamilock.core;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Go {@code time.Duration} text, as HAMi flags and {@code HAMI_NODELOCK_EXPIRE} take it: {@link
 * #parse} accepts exactly what Go's {@code time.ParseDuration} ({@code src/time/format.go})
 * accepts, fractions converted as Go does; {@link #format} is Go's {@code Duration.String()}
 * ({@code time.go}), e.g. {@code 5m0s}, {@code 1.5µs}; {@code parse(format(d)).equals(d)} in Go's
 * range ({@code ±2^63} ns).
 */
public final class GoDuration {

  private static final long NANOS_PER_MICRO = 1_000L;
  private static final long NANOS_PER_MILLI = 1_000_000L;
  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final long NANOS_PER_MINUTE = 60 * NANOS_PER_SECOND;
  private static final long NANOS_PER_HOUR = 60 * NANOS_PER_MINUTE;

  /** {@code 1 << 63} as an unsigned 64-bit value (Go's {@code 1<<63}). */
  private static final long TWO_POW_63 = Long.MIN_VALUE;

  private static final Map<String, Long> UNITS =
      Map.of(
          "ns", 1L,
          "us", NANOS_PER_MICRO,
          "\u00b5s", NANOS_PER_MICRO,
          "\u03bcs", NANOS_PER_MICRO,
          "ms", NANOS_PER_MILLI,
          "s", NANOS_PER_SECOND,
          "m", NANOS_PER_MINUTE,
          "h", NANOS_PER_HOUR);

  private GoDuration() {}

  /**
   * Parses Go duration text, e.g. {@code 300s}, {@code 1h30m}, {@code -1.5h}, {@code 0} (not
   * trimmed).
   *
   * @throws InvalidGoDurationException naming the text if Go would reject it
   * @throws NullPointerException if {@code text} is {@code null}
   */
  public static Duration parse(String text) {
    Objects.requireNonNull(text, "text");
    String s = text;
    int i = 0;
    boolean negative = false;
    if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
      negative = s.charAt(0) == '-';
      i = 1;
    }
    if (s.length() - i == 1 && s.charAt(i) == '0') {
      return Duration.ZERO;
    }
    if (i == s.length()) {
      throw new InvalidGoDurationException(text, "empty duration");
    }
    long total = 0; // unsigned
    while (i < s.length()) {
      char c = s.charAt(i);
      if (!(c == '.' || isDigit(c))) {
        throw new InvalidGoDurationException(text, "expected a digit or '.' at offset " + i);
      }
      int start = i;
      long v = 0; // unsigned, leading integer [0-9]*
      for (; i < s.length() && isDigit(s.charAt(i)); i++) {
        v = leadingIntStep(text, v, s.charAt(i));
      }
      boolean pre = i != start;
      Fraction fraction = new Fraction(0, 1, i); // (\.[0-9]*)?
      if (i < s.length() && s.charAt(i) == '.') {
        fraction = leadingFraction(s, i + 1);
      }
      boolean post = fraction.end > i + 1;
      i = fraction.end;
      long f = fraction.value;
      double scale = fraction.scale;
      if (!pre && !post) {
        throw new InvalidGoDurationException(text, "a number needs at least one digit");
      }
      // unit: everything up to the next '.' or digit
      int unitStart = i;
      while (i < s.length() && !(s.charAt(i) == '.' || isDigit(s.charAt(i)))) {
        i++;
      }
      if (i == unitStart) {
        throw new InvalidGoDurationException(text, "missing unit");
      }
      String unitText = s.substring(unitStart, i);
      Long unit = UNITS.get(unitText);
      if (unit == null) {
        throw new InvalidGoDurationException(
            text, "unknown unit \"" + unitText + "\" (expected ns, us, µs, ms, s, m or h)");
      }
      if (Long.compareUnsigned(v, Long.divideUnsigned(TWO_POW_63, unit)) > 0) {
        throw new InvalidGoDurationException(text, "value out of range");
      }
      v *= unit;
      if (f != 0) {
        // Go: v += uint64(float64(f) * (float64(unit) / scale)); the product is < unit.
        v += (long) (unsignedToDouble(f) * ((double) unit / scale));
        if (Long.compareUnsigned(v, TWO_POW_63) > 0) {
          throw new InvalidGoDurationException(text, "value out of range");
        }
      }
      total += v;
      if (Long.compareUnsigned(total, TWO_POW_63) > 0 || Long.compareUnsigned(total, v) < 0) {
        throw new InvalidGoDurationException(text, "value out of range");
      }
    }
    if (negative) {
      return Duration.ofNanos(-total); // -(2^63) wraps to Long.MIN_VALUE, as in Go
    }
    if (total < 0) { // exactly 2^63
      throw new InvalidGoDurationException(text, "value out of range");
    }
    return Duration.ofNanos(total);
  }

  /** One digit of Go's {@code leadingInt}: {@code v * 10 + digit}, unsigned, at most 2^63. */
  private static long leadingIntStep(String text, long v, char digit) {
    if (Long.compareUnsigned(v, Long.divideUnsigned(TWO_POW_63, 10)) > 0) {
      throw new InvalidGoDurationException(text, "value out of range");
    }
    v = v * 10 + (digit - '0');
    if (Long.compareUnsigned(v, TWO_POW_63) > 0) {
      throw new InvalidGoDurationException(text, "value out of range");
    }
    return v;
  }

  /** A fraction's digits as an unsigned integer, its scale (10^digits kept) and where it ended. */
  private record Fraction(long value, double scale, int end) {}

  /** Go's {@code leadingFraction}: the digits from {@code i}, those past 63 bits ignored. */
  private static Fraction leadingFraction(String s, int i) {
    long f = 0; // unsigned
    double scale = 1;
    boolean overflow = false;
    for (; i < s.length() && isDigit(s.charAt(i)); i++) {
      if (overflow || Long.compareUnsigned(f, Long.MAX_VALUE / 10) > 0) {
        overflow = true;
        continue;
      }
      long y = f * 10 + (s.charAt(i) - '0');
      if (Long.compareUnsigned(y, TWO_POW_63) > 0) {
        overflow = true;
      } else {
        f = y;
        scale *= 10;
      }
    }
    return new Fraction(f, scale, i);
  }

  /** Go's largest {@code time.Duration}: 2^63-1 ns (about 292 years). */
  public static final Duration MAX = Duration.ofNanos(Long.MAX_VALUE);

  /** Go's smallest {@code time.Duration}: -2^63 ns. */
  public static final Duration MIN = Duration.ofNanos(Long.MIN_VALUE);

  /**
   * {@code duration} clamped to [{@link #MIN}, {@link #MAX}], as Go's {@code time.Time.Sub}
   * saturates.
   *
   * @throws NullPointerException if {@code duration} is {@code null}
   */
  public static Duration saturate(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    return duration.compareTo(MAX) > 0 ? MAX : duration.compareTo(MIN) < 0 ? MIN : duration;
  }

  /**
   * {@link #format} of {@link #saturate}, for ages of arbitrary timestamps.
   *
   * @throws NullPointerException if {@code duration} is {@code null}
   */
  public static String formatSaturated(Duration duration) {
    return format(saturate(duration));
  }

  /**
   * Go's {@code Duration.String()}, e.g. {@code 0s}, {@code 100ms}, {@code 5m0s}, {@code -1.5µs}.
   *
   * @throws InvalidGoDurationException if the duration does not fit Go's {@code int64} nanoseconds
   * @throws NullPointerException if {@code duration} is {@code null}
   */
  public static String format(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    long nanos;
    try {
      nanos = duration.toNanos();
    } catch (ArithmeticException e) {
      throw new InvalidGoDurationException(
          duration.toString(), "outside Go's time.Duration range (int64 nanoseconds)");
    }
    boolean negative = nanos < 0;
    long u = negative ? -nanos : nanos; // unsigned magnitude; Long.MIN_VALUE stays 2^63
    StringBuilder out = new StringBuilder(24);
    if (Long.compareUnsigned(u, NANOS_PER_SECOND) < 0) {
      if (u == 0) {
        return "0s";
      }
      long divisor =
          u < NANOS_PER_MICRO ? 1 : u < NANOS_PER_MILLI ? NANOS_PER_MICRO : NANOS_PER_MILLI;
      out.append(u / divisor);
      appendFraction(out, u % divisor, Long.toString(divisor).length() - 1);
      out.append(u < NANOS_PER_MICRO ? "ns" : u < NANOS_PER_MILLI ? "\u00b5s" : "ms");
    } else {
      long seconds = Long.divideUnsigned(u, NANOS_PER_SECOND);
      long fraction = Long.remainderUnsigned(u, NANOS_PER_SECOND);
      long minutes = seconds / 60;
      long hours = minutes / 60;
      if (hours > 0) {
        out.append(hours).append('h');
      }
      if (minutes > 0) {
        out.append(minutes % 60).append('m');
      }
      out.append(seconds % 60);
      appendFraction(out, fraction, 9);
      out.append('s');
    }
    return negative ? "-" + out : out.toString();
  }

  /** Appends {@code .ddd} for {@code fraction / 10^precision}, without trailing zeros. */
  private static void appendFraction(StringBuilder out, long fraction, int precision) {
    if (fraction == 0) {
      return;
    }
    String digits = Long.toString(fraction);
    out.append('.')
        .append("0".repeat(precision - digits.length()))
        .append(digits.replaceAll("0+$", ""));
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static double unsignedToDouble(long v) {
    return v >= 0 ? (double) v : ((double) (v >>> 1)) * 2.0;
  }
}
