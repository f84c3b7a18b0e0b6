package dev.hamilock.core.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The argument checks of the modules built on core (README "Conventions"): null ⇒ {@link
 * NullPointerException} naming the parameter, any other bad argument ⇒ {@link
 * IllegalArgumentException} naming the value; Guava's {@code checkArgument} shape without Guava.
 * Exported only to named modules: no public API.
 */
public final class Checks {
  private Checks() {}

  /**
   * @throws IllegalArgumentException with {@code template}'s {@code %s} replaced by {@code value},
   *     if {@code ok} is false
   */
  public static void checkArgument(boolean ok, String template, long value) {
    if (!ok) {
      throw new IllegalArgumentException(format(template, value));
    }
  }

  /**
   * @throws IllegalArgumentException with {@code template}'s {@code %s}s replaced by {@code
   *     values}, if {@code ok} is false
   */
  public static void checkArgument(boolean ok, String template, Object... values) {
    if (!ok) {
      throw new IllegalArgumentException(format(template, values));
    }
  }

  /**
   * {@return {@code value}, checked}
   *
   * @throws NullPointerException if {@code value} is null
   * @throws IllegalArgumentException if {@code value} is blank
   */
  public static String requireNonBlank(String value, String name) {
    Objects.requireNonNull(value, name);
    checkArgument(!value.isBlank(), "%s must not be blank: \"%s\"", name, value);
    return value;
  }

  /** Guava's lenient format: each {@code %s} takes the next value, extra values are appended. */
  static String format(String template, Object... values) {
    StringBuilder b = new StringBuilder(template.length() + 16 * values.length);
    int from = 0;
    int i = 0;
    while (i < values.length) {
      int at = template.indexOf("%s", from);
      if (at < 0) {
        break;
      }
      b.append(template, from, at).append(values[i++]);
      from = at + 2;
    }
    b.append(template, from, template.length());
    if (i < values.length) {
      b.append(" [").append(values[i++]);
      while (i < values.length) {
        b.append(", ").append(values[i++]);
      }
      b.append(']');
    }
    return b.toString();
  }

  /**
   * {@return {@code d} in nanoseconds, or {@code Long.MAX_VALUE / 4} (73 years) if it does not fit}
   */
  public static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE / 4;
    }
  }
}
