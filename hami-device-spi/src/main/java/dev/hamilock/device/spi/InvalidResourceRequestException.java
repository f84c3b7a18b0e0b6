package dev.hamilock.device.spi;

/**
 * A container's device resource value this library refuses to interpret — for example a memory
 * request of {@code 16Gi} (17179869184 MiB, beyond int32), a fractional count, or a negative value
 * — where HAMi would silently drop the whole request (spec §7.21).
 */
public final class InvalidResourceRequestException extends Exception {
  private static final long serialVersionUID = 1L;
  private final String container;
  private final String resource;

  public InvalidResourceRequestException(
      String container, String resource, String value, String reason) {
    super("container " + container + ": " + resource + "=" + value + ": " + reason);
    this.container = container;
    this.resource = resource;
  }

  public String container() {
    return container;
  }

  public String resource() {
    return resource;
  }
}
