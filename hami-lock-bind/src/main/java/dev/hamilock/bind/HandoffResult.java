package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.core.LockOwner;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The result of one {@link DevicePluginHandoff} call.
 *
 * @param pod the pod served; for {@link Status#OWNER_NOT_READY} the lock owner; empty for {@link
 *     Status#NO_POD} and {@link Status#ERROR}
 * @param handedOut the containers served (only {@link Status#COMPLETED}, {@link Status#PARTIAL})
 * @param lockReleased whether this call released the pod's node lock (at most once per pod, only
 *     {@link Status#COMPLETED}, {@link Status#FAILED})
 * @param reason why it failed or found nothing; "" otherwise
 * @param failure for {@link Status#FAILED} and {@link Status#ERROR} only
 */
public record HandoffResult(
    Status status,
    Optional<LockOwner> pod,
    Optional<FoundBy> foundBy,
    List<ContainerAllocation> handedOut,
    boolean lockReleased,
    String reason,
    Optional<FlowFailure> failure) {

  /** How one {@link DevicePluginHandoff} call ended. */
  public enum Status {
    /** Every container of the pod has been served; bind phase {@code success}; lock released. */
    COMPLETED,
    /** Containers were served and others remain (more Allocate calls follow); lock kept. */
    PARTIAL,
    /** The allocation failed; bind phase {@code failed}; lock released. */
    FAILED,
    /**
     * No pod is being allocated on the node (HAMi: {@code no binding pod found on node}), or the
     * lock owner was already served (a repeat call); nothing written, nothing released.
     */
    NO_POD,
    /**
     * The node lock names a pod not found, not yet annotated or not yet bound here; nothing written
     * or released, no other pod served in its place; retry later.
     */
    OWNER_NOT_READY,
    /** The cluster or lock could not be read; nothing written, nothing released. */
    ERROR
  }

  /** How the pod was found (HAMi {@code GetPendingPod}, spec §3.1). */
  public enum FoundBy {
    /** The owner named by the node lock. */
    LOCK_OWNER,
    /** The fallback list rule (pods on the node in {@code allocating}/{@code success} phase). */
    FALLBACK_LIST
  }

  /**
   * @throws NullPointerException if a component is null
   * @throws IllegalArgumentException if {@code handedOut} or {@code lockReleased} contradicts the
   *     status
   */
  public HandoffResult {
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(foundBy, "foundBy");
    handedOut = List.copyOf(handedOut);
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(failure, "failure");
    checkArgument(
        handedOut.isEmpty() || status == Status.COMPLETED || status == Status.PARTIAL,
        "a %s result hands out no containers: %s",
        status,
        handedOut);
    checkArgument(
        !lockReleased || status == Status.COMPLETED || status == Status.FAILED,
        "a %s result releases no lock",
        status);
  }
}
