package dev.hamilock.device.spi;

/**
 * A vendor set that cannot be used: two providers with the same CommonWord or overlapping resource
 * names (the message names both provider classes), or a provider that failed to load.
 */
public final class VendorRegistrationException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public VendorRegistrationException(String message) {
    super(message);
  }

  public VendorRegistrationException(String message, Throwable cause) {
    super(message, cause);
  }
}
