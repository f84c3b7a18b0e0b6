package dev.hamilock.extender;

/**
 * A filter or bind request refused before any cluster work because of what it asks (too many
 * candidate nodes; a pod this extender does not serve). {@link ExtenderServer} answers it with HTTP
 * 400 and the verb's result whose {@code Error} is {@link #getMessage()}; {@link #reason()} is the
 * {@code reason} label of the rejected-requests metric.
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
