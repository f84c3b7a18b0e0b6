package dev.hamilock.device.spi;

/**
 * A vendor set that cannot be used: two providers with the same CommonWord or overlapping resource
 * names (the message names both provider classes), or a provider that failed to load.
 */
public final class VendorRegistrationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what conflicts, naming the provider classes
   */
  public VendorRegistrationException(String message) {
    super(message);
  }

  /**
   * @param message what failed
   * @param cause the underlying error (e.g. {@link java.util.ServiceConfigurationError})
   */
  public VendorRegistrationException(String message, Throwable cause) {
    super(message, cause);
  }
}
