package dev.hamilock.core.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * This module's one-line argument checks (the project's precondition convention, README
 * "Conventions"): a null argument is a {@link NullPointerException} naming the parameter ({@link
 * Objects#requireNonNull(Object, String)}), any other bad argument an {@link
 * IllegalArgumentException} whose message names the bad value. The same shape as Guava's {@code
 * Preconditions.checkArgument}, kept here because hami-lock-core depends on SLF4J only (no Guava).
 * The one copy for every module that depends on core (bind, k8s, k8s-bind, extender, the bind
 * testkit, and the class-path tools preflight and benchmarks): {@code module-info} exports this
 * package only to those named modules (qualified {@code exports ... to}), so it is no public API.
 * hami-device-spi, which requires Guava, uses Guava's {@code Preconditions} instead.
 */
public final class Checks {
  private Checks() {}

  /**
   * @param ok the condition the argument must meet
   * @param template the message, {@code %s} replaced by {@code value}
   * @param value the bad value, named in the message
   * @throws IllegalArgumentException if {@code ok} is false
   */
  public static void checkArgument(boolean ok, String template, long value) {
    if (!ok) {
      throw new IllegalArgumentException(format(template, value));
    }
  }

  /**
   * @param ok the condition the argument must meet
   * @param template the message, each {@code %s} replaced by the next of {@code values}
   * @param values the bad values, named in the message
   * @throws IllegalArgumentException if {@code ok} is false
   */
  public static void checkArgument(boolean ok, String template, Object... values) {
    if (!ok) {
      throw new IllegalArgumentException(format(template, values));
    }
  }

  /**
   * @param value a name or other text argument
   * @param name the parameter's name, for the messages
   * @return {@code value}
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
   * @param d a duration
   * @return {@code d} in nanoseconds, or {@code Long.MAX_VALUE / 4} (73 years) if it does not fit
   */
  public static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE / 4;
    }
  }
}
