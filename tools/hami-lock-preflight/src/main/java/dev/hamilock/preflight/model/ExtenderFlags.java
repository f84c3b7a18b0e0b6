package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.Location;
import java.util.Objects;
import java.util.Optional;

/**
 * The node-lock flags of one HAMi scheduler-extender launch found in the input: the {@code
 * vgpu-scheduler-extender} container of the scheduler Deployment (its {@code command}/{@code args})
 * or Helm values ({@code scheduler.nodeLockRetryTimeout} and {@code scheduler.extender.extraArgs},
 * which the chart appends to the command after the built-in flags). For a flag given more than once
 * the last occurrence wins, as in Go's {@code pflag}. Flags follow HAMi's {@code
 * cmd/scheduler/main.go}.
 *
 * @param origin where the launch is described (the container or the values block)
 * @param nodeLockRetryTimeout {@code --node-lock-retry-timeout} as written, when given (HAMi
 *     default {@code 28s})
 * @param nodeLockTimeout {@code --node-lock-timeout} as written, when given (HAMi default {@code
 *     5m})
 */
public record ExtenderFlags(
    Location origin,
    Optional<FlagValue> nodeLockRetryTimeout,
    Optional<FlagValue> nodeLockTimeout) {

  /** Validates non-null components. */
  public ExtenderFlags {
    Objects.requireNonNull(origin, "origin");
    Objects.requireNonNull(nodeLockRetryTimeout, "nodeLockRetryTimeout");
    Objects.requireNonNull(nodeLockTimeout, "nodeLockTimeout");
  }

  /**
   * One flag value as written.
   *
   * @param text the value text, e.g. {@code 28s}
   * @param location where it is written
   */
  public record FlagValue(String text, Location location) {
    /** Validates non-null components. */
    public FlagValue {
      Objects.requireNonNull(text, "text");
      Objects.requireNonNull(location, "location");
    }
  }
}
