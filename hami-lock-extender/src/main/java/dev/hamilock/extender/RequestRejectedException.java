package dev.hamilock.extender;

/**
 * A request refused before any cluster work because of what it asks; {@link ExtenderServer} answers
 * it with HTTP 400 and {@code Error} {@link #getMessage()}.
 */
public final class RequestRejectedException extends Exception {
  private static final long serialVersionUID = 1L;
  private final String reason;

  /** {@code reason}: the metric label, e.g. {@code too_many_nodes}. */
  public RequestRejectedException(String reason, String message) {
    super(message);
    this.reason = reason;
  }

  public String reason() {
    return reason;
  }
}
