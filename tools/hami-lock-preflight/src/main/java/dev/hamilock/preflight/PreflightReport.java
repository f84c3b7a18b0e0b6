package dev.hamilock.preflight;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import java.util.List;
import java.util.Objects;

/**
 * The result of one {@link Preflight} run.
 *
 * @param sources the input sources (file names or labels), in input order
 * @param documents how many documents were read
 * @param findings every distinct finding, sorted by check id, then source, document and path
 */
public record PreflightReport(List<String> sources, int documents, List<Finding> findings) {

  /** Copies the lists. */
  public PreflightReport {
    sources = List.copyOf(sources);
    findings = List.copyOf(findings);
    checkArgument(documents >= 0, "documents must be >= 0, was %s", documents);
  }

  /**
   * @param severity a severity
   * @return how many findings have it
   */
  public long count(Severity severity) {
    Objects.requireNonNull(severity, "severity");
    return findings.stream().filter(f -> f.severity() == severity).count();
  }

  /**
   * @return whether any finding is an {@link Severity#ERROR}
   */
  public boolean hasErrors() {
    return count(Severity.ERROR) > 0;
  }

  /**
   * @return whether there is no ERROR and no WARNING (INFO findings allowed)
   */
  public boolean isClean() {
    return count(Severity.ERROR) == 0 && count(Severity.WARNING) == 0;
  }
}
