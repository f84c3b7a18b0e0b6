package dev.hamilock.bind.cluster;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * A failed read or write through the {@link ClusterReader} / {@link ClusterWriter} ports. Callers
 * branch on {@link #kind()}, never on the message.
 *
 * <p>Mapping for a Kubernetes implementation: HTTP 404 ⇒ {@link Kind#NOT_FOUND}; 409 Conflict
 * (resourceVersion or UID precondition) ⇒ {@link Kind#CONFLICT}; timeout, connection reset, 429 and
 * 5xx ⇒ {@link Kind#UNAVAILABLE} (a write may or may not have been applied); 400, 403 and 422 ⇒
 * {@link Kind#REJECTED}; an interrupted call ⇒ {@link Kind#INTERRUPTED} with the thread's interrupt
 * flag restored. The HTTP status of the answer, when there was one, is {@link #httpStatus()}; the
 * client's exception is the {@linkplain #getCause() cause}.
 */
public final class ClusterException extends Exception {

  private static final long serialVersionUID = 1L;

  /** What went wrong, independent of the backend. */
  public enum Kind {
    /** The object (pod or node) does not exist, or a different incarnation (UID) exists. */
    NOT_FOUND,
    /** An optimistic-concurrency precondition failed; nothing was written. */
    CONFLICT,
    /** The backend could not be reached or failed transiently; a write may have been applied. */
    UNAVAILABLE,
    /** The backend refused the request (validation, authorization). Nothing was written. */
    REJECTED,
    /** The calling thread was interrupted (its interrupt flag is set again). */
    INTERRUPTED
  }

  private final Kind kind;
  private final int httpStatus; // 0: no HTTP answer

  /**
   * A failure without an HTTP answer (or from a backend without HTTP).
   *
   * @param kind the failure kind
   * @param message what failed, naming the object (e.g. {@code pod default/p1})
   * @param cause the backend's exception, or {@code null}
   */
  public ClusterException(Kind kind, String message, Throwable cause) {
    this(kind, message, cause, OptionalInt.empty());
  }

  /**
   * @param kind the failure kind
   * @param message what failed, naming the object (e.g. {@code pod default/p1})
   * @param cause the backend's exception, or {@code null}
   * @param httpStatus the HTTP status of the answer (100..599), empty if there was no answer
   * @throws IllegalArgumentException for a status outside 100..599
   */
  public ClusterException(Kind kind, String message, Throwable cause, OptionalInt httpStatus) {
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
   * @return the HTTP status of the failed answer (e.g. 404, 409, 500); empty if there was none
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
   * @return whether the same call may succeed later ({@link Kind#UNAVAILABLE}, {@link
   *     Kind#CONFLICT})
   */
  public boolean isRetryable() {
    return kind == Kind.UNAVAILABLE || kind == Kind.CONFLICT;
  }
}
