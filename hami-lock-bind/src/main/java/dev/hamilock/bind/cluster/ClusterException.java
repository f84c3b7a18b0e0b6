package dev.hamilock.bind.cluster;

import dev.hamilock.core.BackendFailure;
import java.util.OptionalInt;

/**
 * A failed read or write through the {@link ClusterReader} / {@link ClusterWriter} ports, with the
 * kinds of the node lock's {@link dev.hamilock.core.LockBackendException} ({@link BackendFailure}
 * gives the Kubernetes mapping). Callers branch on {@link #kind()}, never on the message. The
 * client's exception is the {@linkplain #getCause() cause}.
 */
public final class ClusterException extends Exception implements BackendFailure {

  private static final long serialVersionUID = 1L;

  private final Answer answer;

  /** A failure without an HTTP answer; {@code message} names the object, {@code cause} nullable. */
  public ClusterException(Kind kind, String message, Throwable cause) {
    this(kind, message, cause, OptionalInt.empty());
  }

  /**
   * @param httpStatus the HTTP status of the answer (100..599), empty if there was no answer
   * @throws IllegalArgumentException for a status outside 100..599
   */
  public ClusterException(Kind kind, String message, Throwable cause, OptionalInt httpStatus) {
    super(message, cause);
    this.answer = new Answer(kind, httpStatus);
  }

  @Override
  public Answer answer() {
    return answer;
  }
}
