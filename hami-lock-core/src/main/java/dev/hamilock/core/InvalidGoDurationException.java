package dev.hamilock.core;

import java.util.Objects;

/**
 * A text Go's {@code time.ParseDuration} rejects ({@link GoDuration#parse}), or a duration outside
 * Go's {@code int64} nanoseconds ({@link GoDuration#format}); bad input, so an {@link
 * IllegalArgumentException}.
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
