package dev.hamilock.doctor;

import java.util.Optional;

/**
 * The doctor could not read something it needs from the API server (exit status 2): names what it
 * tried, the HTTP status and the server's message, and for a 403 the permission to grant.
 */
public final class ClusterReadException extends Exception {

  private static final long serialVersionUID = 1L;

  private final String what;
  private final int code;
  private final Optional<String> missingPermission;

  /**
   * @param what what was being read, e.g. {@code list pods in all namespaces}
   * @param code the HTTP status, or 0 when there was no answer (connection refused, TLS, timeout)
   * @param why the server's message or the I/O error
   * @param missingPermission for a 403, the RBAC rule that would allow the read
   * @param cause the underlying exception, may be null
   */
  public ClusterReadException(
      String what, int code, String why, Optional<String> missingPermission, Throwable cause) {
    super(
        "cannot "
            + what
            + ": "
            + (code == 0 ? "" : "HTTP " + code + " ")
            + why
            + missingPermission
                .map(
                    p ->
                        " (the doctor needs "
                            + p
                            + "; see the read-only ClusterRole in the"
                            + " hami-lock-doctor README)")
                .orElse(""),
        cause);
    this.what = what;
    this.code = code;
    this.missingPermission = missingPermission;
  }

  /**
   * @return what was being read
   */
  public String what() {
    return what;
  }

  /**
   * @return the HTTP status, 0 without an answer
   */
  public int code() {
    return code;
  }

  /**
   * @return for a 403, the rule that would allow the read
   */
  public Optional<String> missingPermission() {
    return missingPermission;
  }
}
