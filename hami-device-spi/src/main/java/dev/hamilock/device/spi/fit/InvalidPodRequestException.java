package dev.hamilock.device.spi.fit;

/**
 * A pod whose device request cannot be evaluated at all: a refused resource value (cause {@link
 * dev.hamilock.device.spi.InvalidResourceRequestException}) or a malformed {@code
 * hami.io/device-scoring-weights} annotation (HAMi's Filter errors in both cases).
 */
public final class InvalidPodRequestException extends Exception {
  private static final long serialVersionUID = 1L;

  public InvalidPodRequestException(String podKey, String message, Throwable cause) {
    super("pod " + podKey + ": " + message, cause);
  }
}
