package dev.hamilock.device.spi.codec;

import java.util.Optional;

/**
 * A HAMi device annotation (node registration, pair scores, or pod allocation) that cannot be
 * decoded. The message names the offending segment or value; for the colon registration format it
 * is byte-identical to HAMi's ({@code pkg/device/devices.go} DecodeNodeDevices, vector V36).
 */
public final class DeviceAnnotationException extends Exception {
  private static final long serialVersionUID = 1L;
  private final String segment;

  /** {@code segment}: the offending segment or value, null when the whole value is at fault. */
  public DeviceAnnotationException(String message, String segment) {
    super(message);
    this.segment = segment;
  }

  public DeviceAnnotationException(String message, String segment, Throwable cause) {
    super(message, cause);
    this.segment = segment;
  }

  public Optional<String> segment() {
    return Optional.ofNullable(segment);
  }
}
