package dev.hamilock.k8s.internal;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.Duration;
import java.util.Objects;

/**
 * Duration and attempt-count checks naming the setting and the bad value (README "Conventions": NPE
 * naming the setting for null, IAE naming the value otherwise). Not part of the public API.
 */
public final class Validation {

  private Validation() {}

  /**
   * {@code d}; NPE naming setting {@code name} if null, IAE naming it and {@code d} if not
   * positive.
   */
  public static Duration positive(String name, Duration d) {
    Objects.requireNonNull(d, name);
    checkArgument(!d.isZero() && !d.isNegative(), "%s must be positive: %s", name, d);
    return d;
  }

  /** {@code n}; IAE naming setting {@code name} and {@code n} if outside 1..100. */
  public static int attempts(String name, int n) {
    checkArgument(n >= 1 && n <= 100, "%s must be 1..100: %s", name, n);
    return n;
  }
}
