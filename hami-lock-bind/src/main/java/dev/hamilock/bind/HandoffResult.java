package dev.hamilock.bind;

import dev.hamilock.core.LockOwner;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The result of one {@link DevicePluginHandoff} call.
 *
 * @param status what happened
 * @param pod the pod served (exact namespace/name/UID), empty for {@link Status#NO_POD} and some
 *     {@link Status#ERROR}s
 * @param foundBy how the pod was found
 * @param handedOut the containers served by this call (empty unless {@link Status#COMPLETED} or
 *     {@link Status#PARTIAL})
 * @param lockReleased whether this call released the pod's node lock (true at most once per pod:
 *     on {@link Status#COMPLETED} and {@link Status#FAILED} when the pod held it)
 * @param reason why it failed or found nothing; "" otherwise
 */
public record HandoffResult(
    Status status,
    Optional<LockOwner> pod,
    Optional<FoundBy> foundBy,
    List<ContainerAllocation> handedOut,
    boolean lockReleased,
    String reason) {

  /** Outcomes. */
  public enum Status {
    /** Every container of the pod has been served; bind phase {@code success}; lock released. */
    COMPLETED,
    /** Containers were served and others remain (more Allocate calls follow); lock kept. */
    PARTIAL,
    /** The allocation failed; bind phase {@code failed}; lock released. */
    FAILED,
    /** No pod is being allocated on the node (HAMi: {@code no binding pod found on node}); nothing written. */
    NO_POD,
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

  /** Validates and copies. @throws NullPointerException on null components */
  public HandoffResult {
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(foundBy, "foundBy");
    handedOut = List.copyOf(handedOut);
    Objects.requireNonNull(reason, "reason");
  }
}
