package dev.hamilock.core;

import java.util.OptionalInt;

/**
 * A failure of the storage behind a node lock (for Kubernetes: the API server) or of the
 * owner-liveness check; never contention. The acquire loop returns it at once, unwrapped, and never
 * retries it (HAMi {@code acquireNodeLocks}: non-contention errors are returned as-is).
 *
 * <p>{@link #kind()} lets callers react without parsing messages ({@link BackendFailure}: the same
 * kinds as the bind flow's cluster ports); {@link #isRetryable()} says whether the same call may
 * succeed if repeated later; {@link Kind#CONFLICT} here means the value kept changing under
 * concurrent writers for longer than the bounded number of compare-and-set rounds.
 */
public final class LockBackendException extends NodeLockException implements BackendFailure {

  private static final long serialVersionUID = 1L;

  private final Answer answer;

  /**
   * @param message what failed; should name the node, the key and, if relevant, the lock value
   * @param cause the backend's exception, or {@code null}
   */
  public LockBackendException(Kind kind, String message, Throwable cause) {
    this(kind, message, cause, OptionalInt.empty());
  }

  /**
   * @param message what failed; should name the node, the key and, if relevant, the lock value
   * @param cause the backend's exception, or {@code null}
   * @param httpStatus the HTTP status of the backend's answer (100..599), empty if there was none
   * @throws IllegalArgumentException for a status outside 100..599
   */
  public LockBackendException(Kind kind, String message, Throwable cause, OptionalInt httpStatus) {
    super(message, cause);
    this.answer = new Answer(kind, httpStatus);
  }

  @Override
  public Answer answer() {
    return answer;
  }
}
