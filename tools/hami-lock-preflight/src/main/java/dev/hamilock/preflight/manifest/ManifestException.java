package dev.hamilock.preflight.manifest;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * An input file that cannot be used: unreadable, not valid YAML/JSON, or a document that is not a
 * mapping. The message always names the file and, when the problem is inside a document, the
 * document's 1-based number.
 */
public final class ManifestException extends Exception {

  private static final long serialVersionUID = 1L;

  private final String source;
  private final OptionalInt documentNumber;
  private final String problem;

  /**
   * Creates the exception.
   *
   * @param source the file (or label) that failed
   * @param documentNumber 1-based document number, if the problem is inside one document
   * @param problem what is wrong, e.g. {@code mapping values are not allowed here (line 4)}
   * @param cause the underlying exception, or {@code null}
   */
  public ManifestException(
      String source, OptionalInt documentNumber, String problem, Throwable cause) {
    super(format(source, documentNumber, problem), cause);
    this.source = Objects.requireNonNull(source, "source");
    this.documentNumber = Objects.requireNonNull(documentNumber, "documentNumber");
    this.problem = Objects.requireNonNull(problem, "problem");
  }

  private static String format(String source, OptionalInt documentNumber, String problem) {
    return documentNumber.isPresent()
        ? source + ": document " + documentNumber.getAsInt() + ": " + problem
        : source + ": " + problem;
  }

  /**
   * @return the file (or label) that failed
   */
  public String source() {
    return source;
  }

  /**
   * @return the 1-based number of the failing document, when the problem is inside one
   */
  public OptionalInt documentNumber() {
    return documentNumber;
  }

  /**
   * @return the problem without the file and document prefix
   */
  public String problem() {
    return problem;
  }
}
