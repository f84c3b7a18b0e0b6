package dev.hamilock.device.spi;

/**
 * A registered {@link DeviceVendor}'s method failed with an unchecked exception (a bug) or answered
 * null where it may not, where no typed answer of the method itself can say so ({@link
 * DeviceVendor#encodeAllocation}, through {@link VendorRegistry#allocationAnnotations}). The flows
 * report it as a failure of kind {@code INVALID_DATA}; the cause is the vendor's exception, if any.
 */
public final class VendorException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message names the vendor (CommonWord and class), the method and what it did
   * @param cause the vendor's exception; null when it answered null
   */
  public VendorException(String message, Throwable cause) {
    super(message, cause);
  }
}
