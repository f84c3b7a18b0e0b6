package dev.hamilock.extender.v1;

import java.util.Objects;

/**
 * A scheduler-extender payload (or a Pod/Node object inside one) that cannot be decoded. The
 * message names the field path (e.g. {@code ExtenderArgs.NodeNames[2]}) and the bad value.
 */
public final class ExtenderJsonException extends Exception {
  private static final long serialVersionUID = 1L;

  private final String field;

  /**
   * What is wrong (naming the bad value) at {@code field}, e.g. {@code ExtenderArgs.NodeNames} ("":
   * the document as a whole); {@code cause}: the parser's exception, or null.
   */
  public ExtenderJsonException(String field, String message, Throwable cause) {
    super(field.isEmpty() ? message : field + ": " + message, cause);
    this.field = Objects.requireNonNull(field, "field");
  }

  /** Path of the offending field; "" when the document itself is unreadable. */
  public String field() {
    return field;
  }
}
