package dev.hamilock.core;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * What every failed call to the cluster backend says, whichever port made it (the lock's {@link
 * LockBackendException}, the bind flow's {@code ClusterException}): one {@link Kind}, classified
 * once ({@link #classify}); callers branch on it, never on the message.
 */
public interface BackendFailure {

  /** What went wrong, independent of the backend. */
  enum Kind {
    /** The object (node, pod) does not exist, or a different incarnation (UID) exists. */
    NOT_FOUND,
    /** An optimistic-concurrency precondition failed, or kept failing; nothing was written. */
    CONFLICT,
    /** The backend could not be reached or failed transiently; a write may have been applied. */
    UNAVAILABLE,
    /** The backend refused the request (validation, authorization). Nothing was written. */
    REJECTED,
    /** The calling thread was interrupted (its interrupt flag is set again). */
    INTERRUPTED;

    /** {@link #NOT_FOUND}, by the name the lock store gave a missing node. */
    public static final Kind NODE_NOT_FOUND = NOT_FOUND;
  }

  /**
   * The kind of one failure and the HTTP status of its answer.
   *
   * @param httpStatus the HTTP status of the failed answer (100..599, e.g. 404, 409, 500); empty if
   *     there was no answer or no HTTP
   */
  record Answer(Kind kind, OptionalInt httpStatus) {
    /**
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException naming the status if it is outside 100..599
     */
    public Answer {
      Objects.requireNonNull(kind, "kind");
      int status = Objects.requireNonNull(httpStatus, "httpStatus").orElse(100);
      if (status < 100 || status > 599) {
        throw new IllegalArgumentException("httpStatus must be 100..599: " + status);
      }
    }
  }

  /** {@return the kind and HTTP status of this failure} */
  Answer answer();

  /** {@return the failure kind} */
  default Kind kind() {
    return answer().kind();
  }

  /** {@return the HTTP status of the failed answer, as {@link Answer#httpStatus()}} */
  default OptionalInt httpStatus() {
    return answer().httpStatus();
  }

  /** {@return whether the same call may succeed later: UNAVAILABLE and CONFLICT} */
  default boolean isRetryable() {
    return kind() == Kind.UNAVAILABLE || kind() == Kind.CONFLICT;
  }

  /**
   * The classification of a final failure of a Kubernetes request (kube-api-notes §4.9):
   * interruption ⇒ INTERRUPTED; no answer, 429, 5xx or an unreadable 2xx ⇒ UNAVAILABLE; 404, or
   * another incarnation (409 {@code UID in precondition}, k8s.io/apiserver {@code
   * Preconditions.Check}; 422 on {@code metadata.uid}) ⇒ NOT_FOUND; 409 ⇒ CONFLICT; else REJECTED.
   *
   * @param status the HTTP status, 0 for no answer (timeout, reset, interruption)
   * @param body the answer's body (a {@code v1.Status}), or {@code null}
   * @param interruption whether the calling thread's interruption ended the call
   */
  static Kind classify(int status, String body, boolean interruption) {
    boolean otherIncarnation =
        body != null
            && ((status == 409 && body.contains("UID in precondition"))
                || (status == 422 && body.contains("metadata.uid")));
    if (interruption) {
      return Kind.INTERRUPTED;
    } else if (status == 0 || status == 429 || status >= 500 || (status >= 200 && status < 300)) {
      return Kind.UNAVAILABLE;
    } else if (status == 404 || otherIncarnation) {
      return Kind.NOT_FOUND;
    } else if (status == 409) {
      return Kind.CONFLICT;
    }
    return Kind.REJECTED;
  }
}
