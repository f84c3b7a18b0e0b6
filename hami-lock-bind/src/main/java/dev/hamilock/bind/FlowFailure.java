package dev.hamilock.bind;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.core.BackendFailure;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Why a flow did not succeed, one shape for the three flows' results ({@link BindResult}, {@link
 * FilterDecision}, {@link HandoffResult}: the flows never throw for cluster, lock or data
 * problems). Callers branch on {@link #kind()}, {@link #retryable()}, {@link #contention()} and
 * {@link #httpStatus()}, never on the message.
 *
 * @param message what failed, naming the pod/node (for the bind flow {@link BindResult#reason()})
 * @param httpStatus the HTTP status of the API answer that failed the flow, if any
 */
public record FlowFailure(
    Kind kind, String message, OptionalInt httpStatus, Optional<Throwable> cause) {

  /** What kind of failure, across the three flows and both backends. */
  public enum Kind {
    /**
     * Another pod holds a node lock, the gang wait timed out, a stalled bind lost its lock, or a
     * malformed lock value ({@code StoreNodeLock}). Retryable.
     */
    CONTENTION,
    /** The pod or node (or the requested UID incarnation) does not exist. Not retryable as is. */
    NOT_FOUND,
    /** The pod is already bound to another node. Not retryable. */
    ALREADY_BOUND,
    /** An optimistic-concurrency precondition failed; nothing was written. Retryable. */
    CONFLICT,
    /**
     * The backend could not be reached or failed transiently (timeout, reset, HTTP 429 or 5xx); a
     * write may have been applied. Retryable.
     */
    UNAVAILABLE,
    /** The backend refused the request (HTTP 400, 403, 422, other 4xx). Not retryable. */
    REJECTED,
    /** The calling thread was interrupted (its interrupt flag is set again). Not retryable. */
    INTERRUPTED,
    /** The pod's requests (or kubelet's Allocate) cannot be served as asked. Not retryable. */
    INVALID_REQUEST,
    /** An annotation the flow must read is malformed (a lock value: {@link #CONTENTION}). */
    INVALID_DATA,
    /** The pod does not fit the node's current usage. Retryable (kube-scheduler filters again). */
    DOES_NOT_FIT,
    /** The caller reported a failure ({@link DevicePluginHandoff#fail}). Not retryable. */
    REPORTED
  }

  /**
   * @throws NullPointerException if a component is null
   */
  public FlowFailure {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(httpStatus, "httpStatus");
    Objects.requireNonNull(cause, "cause");
  }

  /**
   * @return whether the same call may succeed later as is: {@link Kind#CONTENTION}, {@link
   *     Kind#CONFLICT}, {@link Kind#UNAVAILABLE}, {@link Kind#DOES_NOT_FIT}
   */
  public boolean retryable() {
    return kind == Kind.CONTENTION
        || kind == Kind.CONFLICT
        || kind == Kind.UNAVAILABLE
        || kind == Kind.DOES_NOT_FIT;
  }

  /** {@return whether it is node-lock contention (expected under load; logged at DEBUG)} */
  public boolean contention() {
    return kind == Kind.CONTENTION;
  }

  /** {@return a failure without exception or HTTP answer (a decision of the flow)} */
  public static FlowFailure of(Kind kind, String message) {
    return new FlowFailure(kind, message, OptionalInt.empty(), Optional.empty());
  }

  /**
   * The failure an exception describes, with its HTTP status if any: a {@link BackendFailure} by
   * its kind, {@link LockContentionException} as {@link Kind#CONTENTION}, {@link
   * InvalidPodRequestException} as {@link Kind#INVALID_REQUEST}, {@link InterruptedException} as
   * {@link Kind#INTERRUPTED}; a null or other cause as {@code otherwise}.
   */
  public static FlowFailure of(String message, Throwable cause, Kind otherwise) {
    Kind kind = otherwise;
    OptionalInt status = OptionalInt.empty();
    if (cause instanceof BackendFailure b) {
      kind = Kind.valueOf(b.kind().name()); // BackendFailure's kinds all exist here
      status = b.httpStatus();
    } else if (cause instanceof LockContentionException) {
      kind = Kind.CONTENTION;
    } else if (cause instanceof InvalidPodRequestException) {
      kind = Kind.INVALID_REQUEST;
    } else if (cause instanceof InterruptedException) {
      kind = Kind.INTERRUPTED;
    }
    return new FlowFailure(kind, message, status, Optional.ofNullable(cause));
  }

  /**
   * The failure a Binding POST's result describes: NOT_FOUND, ALREADY_BOUND, CONFLICT as such,
   * AMBIGUOUS ⇒ {@link Kind#UNAVAILABLE}, otherwise {@link Kind#REJECTED}.
   */
  public static FlowFailure of(String message, BindingPostResult binding) {
    Kind kind =
        switch (binding.kind()) {
          case NOT_FOUND -> Kind.NOT_FOUND;
          case ALREADY_BOUND -> Kind.ALREADY_BOUND;
          case AMBIGUOUS -> Kind.UNAVAILABLE;
          case CONFLICT -> Kind.CONFLICT;
          default -> Kind.REJECTED;
        };
    return new FlowFailure(kind, message, binding.httpStatus(), binding.cause());
  }
}
