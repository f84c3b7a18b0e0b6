package dev.hamilock.core;

import java.util.Objects;

/**
 * Thrown by {@link GoDuration#parse(String)} when a text is not a Go {@code time.Duration} (Go's
 * {@code time.ParseDuration} would return an error for it), and by {@link
 * GoDuration#format(java.time.Duration)} when a duration does not fit Go's {@code int64}
 * nanoseconds.
 *
 * <p>It is an {@link IllegalArgumentException} so that configuration code can treat it as bad
 * input; {@link #value()} gives the offending text verbatim.
 */
public final class InvalidGoDurationException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String value;

  /**
   * @param value the rejected text (or the rejected duration's {@code toString()}), verbatim
   * @param reason why it was rejected, e.g. {@code unknown unit "d"}
   */
  public InvalidGoDurationException(String value, String reason) {
    super("invalid Go duration \"" + value + "\": " + Objects.requireNonNull(reason, "reason"));
    this.value = value;
  }

  /** {@return the rejected text, verbatim (may be empty, never {@code null})} */
  public String value() {
    return value;
  }
}
