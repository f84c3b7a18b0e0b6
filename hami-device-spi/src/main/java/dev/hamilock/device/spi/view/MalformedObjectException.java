package dev.hamilock.device.spi.view;

import java.util.Objects;

/**
 * A JSON object {@link JsonViews} cannot read: a required field missing, a wrong JSON type or a
 * malformed quantity; the message names the field path and the bad value.
 */
public final class MalformedObjectException extends Exception {
  private static final long serialVersionUID = 1L;

  private final String field;
  private final String value;

  /**
   * @param field path of the offending field; "" for the document as a whole
   * @param value the bad value as JSON text ("" when the field is missing)
   */
  public MalformedObjectException(String field, String value, String problem, Throwable cause) {
    super(
        (Objects.requireNonNull(field, "field").isEmpty() ? "" : field + ": ")
            + Objects.requireNonNull(problem, "problem")
            + (Objects.requireNonNull(value, "value").isEmpty() ? "" : " (value " + value + ")"),
        cause);
    this.field = field;
    this.value = value;
  }

  public String field() {
    return field;
  }

  public String value() {
    return value;
  }
}
