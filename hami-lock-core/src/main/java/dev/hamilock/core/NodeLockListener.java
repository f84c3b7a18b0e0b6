package dev.hamilock.core;

import java.time.Duration;

/**
 * Observer of node-lock events, e.g. for metrics. All methods default to no-ops and are called
 * synchronously on the acting thread, so implementations must be fast and must not throw;
 * {@link #NOOP} costs one virtual call per event and allocates nothing.
 */
public interface NodeLockListener {

    /** The listener that ignores every event. */
    NodeLockListener NOOP = new NodeLockListener() {
    };

    /**
     * A lock was obtained (for takeovers, after {@link #takenOver}).
     *
     * @param node    the node
     * @param key     the lock key
     * @param owner   the new holder
     * @param outcome how it was obtained
     */
    default void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {
    }

    /**
     * An attempt found the lock held by someone else.
     *
     * @param contention the contention (node, key, holder value and age)
     */
    default void contended(LockContentionException contention) {
    }

    /**
     * An owner's lock was removed by its release.
     *
     * @param node  the node
     * @param key   the lock key
     * @param owner the releasing holder
     */
    default void released(String node, String key, LockOwner owner) {
    }

    /**
     * An expired or dangling lock was replaced.
     *
     * @param node          the node
     * @param key           the lock key
     * @param owner         the new holder
     * @param previousValue the replaced lock value, verbatim
     * @param reason        {@link AcquireOutcome#TOOK_OVER_EXPIRED} or
     *                      {@link AcquireOutcome#TOOK_OVER_DANGLING}
     */
    default void takenOver(String node, String key, LockOwner owner, String previousValue, AcquireOutcome reason) {
    }

    /**
     * An acquire call of the acquire loop ended.
     *
     * @param node     the node
     * @param owner    the acquiring pod
     * @param waited   wall time from the first attempt to the end
     * @param attempts attempts made, &ge; 1
     * @param acquired whether the locks were obtained
     */
    default void waited(String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
    }
}
