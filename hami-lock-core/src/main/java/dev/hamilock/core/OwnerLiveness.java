package dev.hamilock.core;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Port: is the pod that holds a lock still alive? Used to take over dangling locks at once instead
 * of waiting for expiry. HAMi ({@code LockNode} in {@code pkg/util/nodelock/nodelock.go}) only
 * treats a NotFound owner as dangling; this library also treats a terminal or terminating owner as
 * gone, because such a pod can never finish its bind.
 *
 * <p>Contract for implementations (the Kubernetes one GETs the pod live, not from a cache): answer
 * {@link State#NOT_FOUND} when no pod with the owner's namespace/name exists, or when the owner
 * carries a UID and the existing pod's UID differs (a recreated pod); {@link
 * State#SUCCEEDED}/{@link State#FAILED} for those phases; {@link State#TERMINATING} when {@code
 * metadata.deletionTimestamp} is set; {@link State#ALIVE} otherwise. If the answer cannot be
 * determined, throw {@link LockBackendException}: the lock is then never taken over.
 *
 * <p><b>Holder status</b> ({@link #status}): besides alive/gone, an expired lock is only taken over
 * when its holder can no longer be served by the device plugin (HAMi#3096: HAMi's plugin finds the
 * pod to serve from the lock value, spec §3.1, so a late {@code Allocate} for the old holder would
 * otherwise hand it the new holder's allocation). For that the lock needs the holder's node ({@code
 * spec.nodeName}), phase and {@code hami.io/bind-phase}: {@link
 * HolderStatus#mayStillBeAllocated(String)}. Implementations over pods override {@link #status};
 * the default wraps {@link #check} with the details unknown (expiry alone transfers).
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
    TERMINATING;

    /** {@code true} for every state but {@link #ALIVE}. */
    public boolean isGone() {
      return this != ALIVE;
    }
  }

  /**
   * Checks whether the owner of a lock is alive.
   *
   * @param owner the lock's owner; carries a UID only if this process wrote the lock
   * @return the owner's state
   * @throws LockBackendException if the state cannot be determined (API error); never answer {@link
   *     State#NOT_FOUND} for an error
   */
  State check(LockOwner owner) throws LockBackendException;

  /**
   * The holder's liveness and, when known, what the device plugin needs to know about it. Same
   * contract as {@link #check} (a live lookup, never NOT_FOUND for an error). Default: {@link
   * HolderStatus#of(State) HolderStatus.of(check(owner))} (details unknown).
   *
   * @param owner the lock's owner; carries a UID only if this process wrote the lock
   * @return the holder's status; never null
   * @throws LockBackendException if the state cannot be determined
   */
  default HolderStatus status(LockOwner owner) throws LockBackendException {
    State state = check(owner);
    return state == null ? null : HolderStatus.of(state);
  }

  /** A pod's {@code status.phase} (Kubernetes {@code PodPhase}). */
  enum PodPhase {
    /**
     * {@code Pending} (also an empty phase): not every container started; Allocate may be pending.
     */
    PENDING,
    /** {@code Running}: the kubelet admitted the pod, so its device Allocate has happened. */
    RUNNING,
    /** {@code Succeeded}. */
    SUCCEEDED,
    /** {@code Failed}. */
    FAILED,
    /** {@code Unknown} (node unreachable) or a value this library does not know. */
    UNKNOWN;

    /**
     * The phase of its API text; {@code null} or empty is {@link #PENDING}, unknown words {@link
     * #UNKNOWN}.
     */
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
   * HAMi's {@code hami.io/bind-phase} pod annotation ({@code pkg/util/types.go}): written {@code
   * allocating} by the scheduler before the Binding, {@code success} or {@code failed} by the
   * device plugin when its Allocate finished (spec §2.3, §3.3).
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
     * The verdict on a holder pod from its fields, the same for every Kubernetes client: the owner
     * carries a UID and the pod's differs (a recreated pod) ⇒ {@link State#NOT_FOUND}, else phase
     * {@code Succeeded} ⇒ {@link State#SUCCEEDED}, {@code Failed} ⇒ {@link State#FAILED}, else a
     * {@code metadata.deletionTimestamp} ⇒ {@link State#TERMINATING}, else {@link State#ALIVE}
     * (kubelet's pod phases, Kubernetes "Pod Lifecycle"). The pod's {@code metadata.uid}, {@code
     * status.phase}, {@code spec.nodeName} and {@link BindPhase#ANNOTATION} may each be {@code
     * null}; {@code deleting}: {@code metadata.deletionTimestamp} is set.
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
     * Whether a device plugin on {@code node} may still run an {@code Allocate} for this holder, so
     * that handing the lock to someone else could give the holder the new owner's allocation
     * (HAMi#3096): the holder is {@link State#ALIVE}, bound to {@code node}, not {@link
     * PodPhase#RUNNING} (nor terminal), and its bind-phase is not {@code success} or {@code failed}
     * ({@code allocating}, absent or unrecognised all count as "may still be served": HAMi's plugin
     * finds its pod through the lock without looking at the phase). {@code false} when the details
     * are unknown ({@link #detailed()} false).
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
