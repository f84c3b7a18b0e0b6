package dev.hamilock.device.spi;

/**
 * A container's device resource value HAMi would silently drop (e.g. {@code 16Gi} of MiB, a
 * fractional count, a negative value; spec §7.21).
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
