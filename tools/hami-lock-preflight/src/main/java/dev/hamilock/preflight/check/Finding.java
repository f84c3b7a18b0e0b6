package dev.hamilock.preflight.check;

import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.preflight.manifest.Location;
import java.util.Objects;

/**
 * One problem found by a {@link PreflightCheck}.
 *
 * @param checkId the check's short id, e.g. {@code PF01}
 * @param checkName the check's descriptive id, e.g. {@code queue-sort-conflict}
 * @param severity how bad it is
 * @param location the offending file, document and path
 * @param message what is wrong and what happens because of it, one or two sentences
 * @param fix what to change, one or two sentences
 * @param setUp the set-up the finding belongs to (the preflight command's name for one group of
 *     inputs, e.g. a sub-directory); empty when the inputs were judged as one set
 */
public record Finding(
    String checkId,
    String checkName,
    Severity severity,
    Location location,
    String message,
    String fix,
    String setUp) {

  /**
   * Validates the components.
   *
   * @throws NullPointerException if any component is {@code null}
   * @throws IllegalArgumentException if {@code checkId}, {@code checkName} or {@code message} is
   *     blank
   */
  public Finding {
    requireNonBlank(checkId, "checkId");
    requireNonBlank(checkName, "checkName");
    Objects.requireNonNull(severity, "severity");
    Objects.requireNonNull(location, "location");
    requireNonBlank(message, "message");
    Objects.requireNonNull(fix, "fix");
    Objects.requireNonNull(setUp, "setUp");
  }

  /**
   * A finding of inputs judged as one set (empty {@link #setUp()}).
   *
   * @param checkId the check's short id
   * @param checkName the check's descriptive id
   * @param severity how bad it is
   * @param location where
   * @param message what is wrong
   * @param fix what to change
   */
  public Finding(
      String checkId,
      String checkName,
      Severity severity,
      Location location,
      String message,
      String fix) {
    this(checkId, checkName, severity, location, message, fix, "");
  }

  /**
   * @param name the set-up's name
   * @return this finding attributed to that set-up
   */
  public Finding inSetUp(String name) {
    return new Finding(checkId, checkName, severity, location, message, fix, name);
  }
}
