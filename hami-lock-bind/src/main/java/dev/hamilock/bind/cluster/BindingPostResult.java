package dev.hamilock.bind.cluster;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The result of one Binding POST ({@code POST /api/v1/namespaces/{ns}/pods/{name}/binding}) through
 * {@link ClusterWriter#bind}, typed so that the bind flow never parses messages. One request's
 * answer, not the whole bind flow's outcome (that is {@code dev.hamilock.bind.BindOutcome} in a
 * {@code BindResult}). The mapping of the API's answer is {@link KubernetesWire#bindingAnswer}.
 *
 * @param kind the outcome
 * @param boundNode for {@link Kind#ALREADY_BOUND}: the node the pod is bound to, if known
 * @param detail the backend's message ("" for {@link Kind#BOUND})
 * @param httpStatus the HTTP status of the answer when it was not a success (e.g. 409, 404, 500);
 *     empty for {@link Kind#BOUND} and when there was no answer (timeout, reset)
 * @param cause the client's exception behind a failed POST, if any
 */
public record BindingPostResult(
    Kind kind,
    Optional<String> boundNode,
    String detail,
    OptionalInt httpStatus,
    Optional<Throwable> cause) {

  /** What the Binding POST did. */
  public enum Kind {
    /** The pod is now bound to the requested node. */
    BOUND,
    /** The pod was already bound (possibly to the requested node). */
    ALREADY_BOUND,
    /** No pod with that namespace/name (and UID). */
    NOT_FOUND,
    /** Unknown whether the binding was applied (timeout, 5xx): re-read the pod. */
    AMBIGUOUS,
    /**
     * The unbound pod is no longer at the resourceVersion the Binding named (HTTP 409 {@code
     * Precondition failed: ResourceVersion in precondition}): something wrote it since; nothing was
     * applied.
     */
    CONFLICT,
    /** Refused; nothing was applied. */
    REJECTED
  }

  /** Validates. @throws NullPointerException on null arguments */
  public BindingPostResult {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(boundNode, "boundNode");
    Objects.requireNonNull(detail, "detail");
    Objects.requireNonNull(httpStatus, "httpStatus");
    Objects.requireNonNull(cause, "cause");
  }

  /** Without HTTP status and cause (an in-memory backend). */
  public BindingPostResult(Kind kind, Optional<String> boundNode, String detail) {
    this(kind, boundNode, detail, OptionalInt.empty(), Optional.empty());
  }

  /**
   * @param status the HTTP status of the answer (empty if there was none)
   * @param failure the client's exception, or null
   * @return a copy carrying them
   */
  public BindingPostResult withAnswer(OptionalInt status, Throwable failure) {
    return new BindingPostResult(kind, boundNode, detail, status, Optional.ofNullable(failure));
  }

  /** {@return a {@link Kind#BOUND} result} */
  public static BindingPostResult bound() {
    return new BindingPostResult(Kind.BOUND, Optional.empty(), "");
  }

  /** {@return a {@link Kind#ALREADY_BOUND} result} */
  public static BindingPostResult alreadyBound(String node) {
    return new BindingPostResult(
        Kind.ALREADY_BOUND,
        Optional.of(Objects.requireNonNull(node, "node")),
        "pod is already assigned to node " + node);
  }

  /** {@return a {@link Kind#NOT_FOUND} result} */
  public static BindingPostResult notFound(String detail) {
    return new BindingPostResult(Kind.NOT_FOUND, Optional.empty(), detail);
  }

  /** {@return a {@link Kind#AMBIGUOUS} result} */
  public static BindingPostResult ambiguous(String detail) {
    return new BindingPostResult(Kind.AMBIGUOUS, Optional.empty(), detail);
  }

  /** {@return a {@link Kind#CONFLICT} result} */
  public static BindingPostResult conflict(String detail) {
    return new BindingPostResult(Kind.CONFLICT, Optional.empty(), detail);
  }

  /** {@return a {@link Kind#REJECTED} result} */
  public static BindingPostResult rejected(String detail) {
    return new BindingPostResult(Kind.REJECTED, Optional.empty(), detail);
  }
}
