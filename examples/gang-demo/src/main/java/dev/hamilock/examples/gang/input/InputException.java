package dev.hamilock.examples.gang.input;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * Input the demo cannot use (exit code 1): an unreadable file, invalid YAML/JSON, or a document
 * whose field has a bad value. The message names the file, the 1-based document number when the
 * problem is inside a document, and the field path ({@code spec.minMember}, {@code
 * spec.containers[0].resources.limits["nvidia.com/gpumem"]}).
 */
public final class InputException extends Exception {
  private static final long serialVersionUID = 1L;

  private final String source;
  private final OptionalInt document;
  private final String field;

  /**
   * @param source the file (or built-in resource label)
   * @param document 1-based document number, if the problem is inside one
   * @param field the field path, "" if the problem is not a field's
   * @param problem what is wrong
   * @param cause the underlying exception, or null
   */
  public InputException(
      String source, OptionalInt document, String field, String problem, Throwable cause) {
    super(format(source, document, field, problem), cause);
    this.source = Objects.requireNonNull(source, "source");
    this.document = Objects.requireNonNull(document, "document");
    this.field = Objects.requireNonNull(field, "field");
  }

  private static String format(String source, OptionalInt document, String field, String problem) {
    StringBuilder b = new StringBuilder(source);
    document.ifPresent(d -> b.append(": document ").append(d));
    if (!field.isEmpty()) {
      b.append(": field ").append(field);
    }
    return b.append(": ").append(problem).toString();
  }

  /**
   * @return the file (or label)
   */
  public String source() {
    return source;
  }

  /**
   * @return the 1-based document number, if known
   */
  public OptionalInt document() {
    return document;
  }

  /**
   * @return the field path, "" if none
   */
  public String field() {
    return field;
  }
}
