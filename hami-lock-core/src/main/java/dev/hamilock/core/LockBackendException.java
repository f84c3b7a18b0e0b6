package dev.hamilock.core;

import java.util.OptionalInt;

/**
 * A failure of the storage behind a node lock or of the owner-liveness check, never contention; the
 * acquire loop returns it at once, as HAMi's {@code acquireNodeLocks} does. {@link Kind#CONFLICT}
 * here: the value kept changing through every compare-and-set round.
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
