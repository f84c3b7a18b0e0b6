package dev.hamilock.bind;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.core.BackendFailure;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Why a flow did not succeed — one shape for the three flows ({@link PodBinder#bind}, {@link
 * ExtenderFilter#filter}/{@link ExtenderFilter#decide}, {@link DevicePluginHandoff}). The flows
 * never throw for cluster, lock or data problems: they return a result ({@link BindResult}, {@link
 * FilterDecision}, {@link HandoffResult}) whose {@code failure()} is this value, next to the flow's
 * own verdict ({@link BindOutcome}, {@link HandoffResult.Status}) and the text the extender puts on
 * the wire ({@code reason}). Callers branch on {@link #kind()}, {@link #retryable()}, {@link
 * #contention()} and {@link #httpStatus()}, never on the message.
 *
 * <p>The values come from a typed exception or Binding answer ({@link #of(String, Throwable,
 * Kind)}, {@link #of(String, BindingPostResult)}) or the flow's own decision (no cause, no status).
 *
 * @param kind what kind of failure
 * @param message what failed, naming the pod/node (for the bind flow the same text as {@link
 *     BindResult#reason()})
 * @param httpStatus the HTTP status of the API answer that failed the flow, if there was one (e.g.
 *     500 for a Binding POST the API server failed, 404, 409, 422)
 * @param cause the underlying exception (client-java's {@code ApiException}, a lock exception,
 *     ...), if any
 */
public record FlowFailure(
    Kind kind, String message, OptionalInt httpStatus, Optional<Throwable> cause) {

  /** What kind of failure, across the three flows and both backends. */
  public enum Kind {
    /**
     * Another pod holds a node lock (fail fast), the gang wait timed out, or a stalled bind lost
     * its lock; also a malformed lock value, held until one lock timeout after this process first
     * saw it ({@code StoreNodeLock}). Retryable.
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

  /** Validates. @throws NullPointerException on a null component */
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

  /**
   * @param message what failed
   * @return a failure without exception or HTTP answer (a decision of the flow)
   */
  public static FlowFailure of(Kind kind, String message) {
    return new FlowFailure(kind, message, OptionalInt.empty(), Optional.empty());
  }

  /**
   * The failure an exception describes, with its HTTP status when it carries one: a {@link
   * BackendFailure} ({@link ClusterException}, {@link LockBackendException}) by its kind, {@link
   * LockContentionException} (and its wait time-out) as {@link Kind#CONTENTION}, {@link
   * InvalidPodRequestException} as {@link Kind#INVALID_REQUEST}, {@link InterruptedException} as
   * {@link Kind#INTERRUPTED}; any other exception as {@code otherwise}.
   *
   * @param message what failed (the flow's text)
   * @param cause the exception; null for none
   * @param otherwise the kind for a null or unclassified cause
   */
  public static FlowFailure of(String message, Throwable cause, Kind otherwise) {
    Kind kind = otherwise;
    OptionalInt status = OptionalInt.empty();
    if (cause instanceof BackendFailure b) {
      kind = of(b.kind());
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
   * The failure a Binding POST's result describes (its HTTP status and exception): NOT_FOUND and
   * ALREADY_BOUND and CONFLICT as such, AMBIGUOUS ⇒ {@link Kind#UNAVAILABLE}, otherwise {@link
   * Kind#REJECTED}.
   *
   * @param message what failed (the flow's text)
   * @param binding the Binding POST's result
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

  /**
   * @param kind a cluster port's or lock backend's failure kind
   * @return the same kind here
   */
  public static Kind of(BackendFailure.Kind kind) {
    return switch (kind) {
      case NOT_FOUND -> Kind.NOT_FOUND;
      case CONFLICT -> Kind.CONFLICT;
      case UNAVAILABLE -> Kind.UNAVAILABLE;
      case REJECTED -> Kind.REJECTED;
      case INTERRUPTED -> Kind.INTERRUPTED;
    };
  }
}
