package dev.hamilock.core;

/**
 * Port: is the pod that holds a lock still alive? Used to take over dangling locks at once
 * instead of waiting for expiry. HAMi ({@code LockNode} in {@code pkg/util/nodelock/nodelock.go})
 * only treats a NotFound owner as dangling; this library also treats a terminal or terminating
 * owner as gone, because such a pod can never finish its bind.
 *
 * <p>Contract for implementations (the Kubernetes one GETs the pod live, not from a cache):
 * answer {@link State#NOT_FOUND} when no pod with the owner's namespace/name exists, or when
 * the owner carries a UID and the existing pod's UID differs (a recreated pod);
 * {@link State#SUCCEEDED}/{@link State#FAILED} for those phases; {@link State#TERMINATING} when
 * {@code metadata.deletionTimestamp} is set; {@link State#ALIVE} otherwise. If the answer cannot
 * be determined, throw {@link LockBackendException}: the lock is then never taken over.
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

        /** @return {@code true} for every state but {@link #ALIVE} */
        public boolean isGone() {
            return this != ALIVE;
        }
    }

    /**
     * Checks whether the owner of a lock is alive.
     *
     * @param owner the lock's owner; carries a UID only if this process wrote the lock
     * @return the owner's state
     * @throws LockBackendException if the state cannot be determined (API error); never answer
     *                              {@link State#NOT_FOUND} for an error
     */
    State check(LockOwner owner) throws LockBackendException;

    /**
     * @return a liveness check that considers every owner alive (no dangling takeover; locks
     *         are only taken over on expiry), for embedders without pods
     */
    static OwnerLiveness assumeAlive() {
        return owner -> State.ALIVE;
    }
}
