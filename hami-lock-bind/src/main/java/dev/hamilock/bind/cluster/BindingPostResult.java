package dev.hamilock.bind.cluster;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The typed answer of one Binding POST ({@link ClusterWriter#bind}; mapped by {@link
 * KubernetesWire#bindingAnswer}), not the bind flow's outcome.
 *
 * @param boundNode for {@link Kind#ALREADY_BOUND}: the node the pod is bound to, if known
 * @param detail the backend's message ("" for {@link Kind#BOUND})
 * @param httpStatus the status of a failed answer; empty for BOUND and without an answer
 */
public record BindingPostResult(
    Kind kind,
    Optional<String> boundNode,
    String detail,
    OptionalInt httpStatus,
    Optional<Throwable> cause) {

  /** What one Binding POST did, by its HTTP answer. */
  public enum Kind {
    /** The pod is now bound to the requested node. */
    BOUND,
    /** The pod was already bound (possibly to the requested node). */
    ALREADY_BOUND,
    /** No pod with that namespace/name (and UID). */
    NOT_FOUND,
    /** Unknown whether the binding was applied (timeout, 5xx): re-read the pod. */
    AMBIGUOUS,
    /** The unbound pod moved past the Binding's resourceVersion (409); nothing was applied. */
    CONFLICT,
    /** Refused; nothing was applied. */
    REJECTED
  }

  /**
   * @throws NullPointerException if a component is null
   */
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

  /** {@return a copy with the answer's status and the client's exception (or null)} */
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
