package dev.hamilock.core;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * A failure of the storage behind a node lock (for Kubernetes: the API server) or of the
 * owner-liveness check; never contention. The acquire loop returns it at once, unwrapped, and never
 * retries it (HAMi {@code acquireNodeLocks}: non-contention errors are returned as-is).
 *
 * <p>{@link #kind()} lets callers react without parsing messages; {@link #isRetryable()} says
 * whether the same call may succeed if repeated later.
 */
public final class LockBackendException extends NodeLockException {

  private static final long serialVersionUID = 1L;

  /** What went wrong, independent of the backend. */
  public enum Kind {
    /** The node (or other lock-bearing object) does not exist. Not retryable. */
    NODE_NOT_FOUND,
    /**
     * The backend could not be reached or answered with a transient failure (timeout, HTTP 5xx or
     * 429, connection reset) and the backend could not resolve whether a write was applied.
     * Retryable.
     */
    UNAVAILABLE,
    /**
     * The value kept changing under concurrent writers for longer than the bounded number of
     * compare-and-set rounds. Retryable.
     */
    CONFLICT,
    /** The backend refused the request (authorization, validation, bad request). Not retryable. */
    REJECTED,
    /** The calling thread was interrupted during the call (the interrupt flag is restored). */
    INTERRUPTED
  }

  private final Kind kind;
  private final int httpStatus; // 0: no HTTP answer

  /**
   * @param kind the failure kind
   * @param message what failed; should name the node, the key and, if relevant, the lock value
   * @param cause the backend's exception, or {@code null}
   */
  public LockBackendException(Kind kind, String message, Throwable cause) {
    this(kind, message, cause, OptionalInt.empty());
  }

  /**
   * @param kind the failure kind
   * @param message what failed; should name the node, the key and, if relevant, the lock value
   * @param cause the backend's exception, or {@code null}
   * @param httpStatus the HTTP status of the backend's answer (100..599), empty if there was none
   * @throws IllegalArgumentException for a status outside 100..599
   */
  public LockBackendException(Kind kind, String message, Throwable cause, OptionalInt httpStatus) {
    super(message, cause);
    this.kind = Objects.requireNonNull(kind, "kind");
    int status = Objects.requireNonNull(httpStatus, "httpStatus").orElse(0);
    checkArgument(
        httpStatus.isEmpty() || (status >= 100 && status <= 599),
        "httpStatus must be 100..599: %s",
        status);
    this.httpStatus = status;
  }

  /**
   * @return the HTTP status of the failed answer (e.g. 404, 500); empty if there was none
   */
  public OptionalInt httpStatus() {
    return httpStatus == 0 ? OptionalInt.empty() : OptionalInt.of(httpStatus);
  }

  /**
   * @return the failure kind
   */
  public Kind kind() {
    return kind;
  }

  /**
   * @return {@code true} for {@link Kind#UNAVAILABLE} and {@link Kind#CONFLICT}
   */
  public boolean isRetryable() {
    return kind == Kind.UNAVAILABLE || kind == Kind.CONFLICT;
  }
}
