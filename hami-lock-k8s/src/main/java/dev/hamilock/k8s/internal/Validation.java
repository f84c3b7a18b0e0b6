package dev.hamilock.k8s.internal;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.Duration;
import java.util.Objects;

/** Setting checks: NPE naming the setting for null, IAE naming it and the value otherwise. */
public final class Validation {

  private Validation() {}

  /** {@code d}, if positive. */
  public static Duration positive(String name, Duration d) {
    Objects.requireNonNull(d, name);
    checkArgument(!d.isZero() && !d.isNegative(), "%s must be positive: %s", name, d);
    return d;
  }

  /** {@code n}, if in 1..100. */
  public static int attempts(String name, int n) {
    checkArgument(n >= 1 && n <= 100, "%s must be 1..100: %s", name, n);
    return n;
  }
}
