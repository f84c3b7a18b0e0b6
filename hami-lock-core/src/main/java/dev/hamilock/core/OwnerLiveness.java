package dev.hamilock.core;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Port: is the pod that holds a lock still alive, so a dangling lock is taken over at once? HAMi
 * ({@code LockNode} in {@code pkg/util/nodelock/nodelock.go}) only treats NotFound as dangling;
 * here a terminal or terminating owner is gone too (it can never finish its bind). Implementations
 * look the pod up live ({@link HolderStatus#ofPod} gives the verdict) and throw {@link
 * LockBackendException} when they cannot tell: the lock is then never taken over. Pod-based ones
 * override {@link #status}, so an expired lock whose holder the device plugin may still serve is
 * not taken over (HAMi#3096, {@link HolderStatus#mayStillBeAllocated(String)}).
 */
@FunctionalInterface
public interface OwnerLiveness {

  /** Liveness of a lock owner. */
  enum State {
    /** The owner exists and may still use the lock. */
    ALIVE,
    /** No such pod (or a different incarnation, by UID). */
    NOT_FOUND,
    /** The pod's phase is Succeeded. */
    SUCCEEDED,
    /** The pod's phase is Failed. */
    FAILED,
    /** The pod is being deleted ({@code deletionTimestamp} set). */
    TERMINATING
  }

  /**
   * The state of a lock's owner (which carries a UID only if this process wrote the lock).
   *
   * @throws LockBackendException if the state cannot be determined (never NOT_FOUND for an error)
   */
  State check(LockOwner owner) throws LockBackendException;

  /**
   * {@link #check} with, when known, the holder's node, phase and bind-phase; default: details
   * unknown.
   *
   * @throws LockBackendException if the state cannot be determined
   */
  default HolderStatus status(LockOwner owner) throws LockBackendException {
    State state = check(owner);
    return state == null ? null : HolderStatus.of(state);
  }

  /** A pod's {@code status.phase} (Kubernetes {@code PodPhase}). */
  enum PodPhase {
    /** {@code Pending} (also an empty phase): Allocate may be pending. */
    PENDING,
    /** {@code Running}: the kubelet admitted the pod, so its device Allocate has happened. */
    RUNNING,
    /** {@code Succeeded}. */
    SUCCEEDED,
    /** {@code Failed}. */
    FAILED,
    /** {@code Unknown} (node unreachable) or a value this library does not know. */
    UNKNOWN;

    /** The phase of its API text; {@code null} or empty is {@link #PENDING}. */
    public static PodPhase parse(String text) {
      return switch (text == null ? "" : text) {
        case "", "Pending" -> PENDING;
        case "Running" -> RUNNING;
        case "Succeeded" -> SUCCEEDED;
        case "Failed" -> FAILED;
        default -> UNKNOWN;
      };
    }
  }

  /**
   * HAMi's {@code hami.io/bind-phase} pod annotation ({@code pkg/util/types.go}; spec §2.3, §3.3).
   */
  enum BindPhase {
    /** {@code allocating}: bound (or about to be) and not yet served by the device plugin. */
    ALLOCATING,
    /** {@code success}: the device plugin's Allocate completed. */
    SUCCESS,
    /** {@code failed}: the device plugin's Allocate failed; it will not serve this bind again. */
    FAILED,
    /** Another, unrecognised value (treated like {@link #ALLOCATING}: may still be served). */
    UNRECOGNISED;

    /** Annotation key: {@value}. */
    public static final String ANNOTATION = "hami.io/bind-phase";

    /** The phase of an annotation value (compared exactly, as HAMi); empty if {@code null}. */
    public static Optional<BindPhase> parse(String text) {
      return Optional.ofNullable(text)
          .map(
              t ->
                  switch (t) {
                    case "allocating" -> ALLOCATING;
                    case "success" -> SUCCESS;
                    case "failed" -> FAILED;
                    default -> UNRECOGNISED;
                  });
    }

    /** The annotation value HAMi writes ({@code allocating}, {@code success}, {@code failed}). */
    public String wireValue() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * What the lock knows about its holder.
   *
   * @param state alive or why gone
   * @param nodeName the pod's {@code spec.nodeName}; empty if unbound or unknown
   * @param phase the pod's phase; empty if unknown
   * @param bindPhase {@code hami.io/bind-phase}; empty if absent or unknown
   * @param detailed whether node, phase and bind-phase were looked up ({@code false}: only {@code
   *     state} is known, as from {@link #check})
   */
  record HolderStatus(
      State state,
      Optional<String> nodeName,
      Optional<PodPhase> phase,
      Optional<BindPhase> bindPhase,
      boolean detailed) {

    /**
     * @throws NullPointerException if an argument is null
     */
    public HolderStatus {
      Objects.requireNonNull(state, "state");
      Objects.requireNonNull(nodeName, "nodeName");
      Objects.requireNonNull(phase, "phase");
      Objects.requireNonNull(bindPhase, "bindPhase");
    }

    /** A status with only the state known. */
    public static HolderStatus of(State state) {
      return new HolderStatus(state, Optional.empty(), Optional.empty(), Optional.empty(), false);
    }

    /** A looked-up pod (the fields as in the record). */
    public static HolderStatus of(
        State state, Optional<String> nodeName, PodPhase phase, Optional<BindPhase> bindPhase) {
      Objects.requireNonNull(phase, "phase");
      return new HolderStatus(state, nodeName, Optional.of(phase), bindPhase, true);
    }

    /**
     * The verdict on a holder pod, the same for every client: another UID than the owner's ⇒
     * NOT_FOUND, else phase Succeeded/Failed, else {@code deleting} (a deletionTimestamp) ⇒
     * TERMINATING, else ALIVE. Every string may be {@code null}.
     */
    public static HolderStatus ofPod(
        LockOwner owner,
        String uid,
        String phase,
        String nodeName,
        String bindPhase,
        boolean deleting) {
      if (uid != null && owner.uid().isPresent() && !uid.equals(owner.uid().get())) {
        return of(State.NOT_FOUND);
      }
      PodPhase p = PodPhase.parse(phase);
      State state =
          p == PodPhase.SUCCEEDED
              ? State.SUCCEEDED
              : p == PodPhase.FAILED ? State.FAILED : deleting ? State.TERMINATING : State.ALIVE;
      return of(
          state,
          Optional.ofNullable(nodeName).filter(n -> !n.isEmpty()),
          p,
          BindPhase.parse(bindPhase));
    }

    /**
     * Whether a device plugin on {@code node} may still run an {@code Allocate} for this holder
     * (HAMi#3096): {@link #detailed()}, ALIVE, bound to {@code node}, not running or terminal, and
     * bind-phase neither {@code success} nor {@code failed}.
     */
    public boolean mayStillBeAllocated(String node) {
      if (!detailed || state != State.ALIVE || nodeName.filter(node::equals).isEmpty()) {
        return false;
      }
      PodPhase p = phase.orElse(PodPhase.UNKNOWN);
      if (p == PodPhase.RUNNING || p == PodPhase.SUCCEEDED || p == PodPhase.FAILED) {
        return false;
      }
      return bindPhase.filter(b -> b == BindPhase.SUCCESS || b == BindPhase.FAILED).isEmpty();
    }
  }

  /** Every owner alive: no dangling takeover, only expiry (for embedders without pods). */
  static OwnerLiveness assumeAlive() {
    return owner -> State.ALIVE;
  }
}
