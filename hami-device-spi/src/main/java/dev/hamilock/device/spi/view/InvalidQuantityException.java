package dev.hamilock.device.spi.view;

/**
 * A Kubernetes resource quantity string that is not valid quantity syntax ({@code
 * k8s.io/apimachinery/pkg/api/resource/quantity.go} grammar), or whose exponent is out of the
 * supported range (|exponent| &le; {@value Quantities#MAX_EXPONENT}).
 */
public final class InvalidQuantityException extends Exception {
  private static final long serialVersionUID = 1L;
  private final String value;

  public InvalidQuantityException(String value, String reason) {
    super("invalid quantity \"" + value + "\": " + reason);
    this.value = value;
  }

  public String value() {
    return value;
  }
}
