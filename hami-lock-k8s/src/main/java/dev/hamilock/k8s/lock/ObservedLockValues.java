package dev.hamilock.k8s.lock;

import java.util.Optional;

/**
 * A local view of node lock annotations kept current by a watch (in this library:
 * {@link dev.hamilock.k8s.watch.NodeLockWatch#observedLockValue(String, String)}), which
 * {@link NodeAnnotationLockStore} consults after a failed create ({@code test null} answered 422)
 * instead of GETting the node: the "the watch's cached view of the annotation can replace
 * the GET after a failed test".
 *
 * <p>The view may lag the API server by the event delivery time. That is safe because the store
 * uses an observed value only as the "current value" of a contended create, and core's
 * {@code StoreNodeLock} then either waits (a release is still signalled by the watch) or
 * compare-and-sets with that exact value as the precondition (a stale value makes the
 * {@code test} fail, after which the store reads the node for real). A view that knows nothing
 * must answer empty, never a guess.
 */
@FunctionalInterface
public interface ObservedLockValues {

    /** A view that knows nothing: every contended create reads the node. */
    ObservedLockValues NONE = (node, key) -> Optional.empty();

    /**
     * @param node the node name
     * @param key  the lock annotation key
     * @return the value of annotation {@code key} on {@code node} as currently observed; empty if
     *         absent, unknown, or the view is not trustworthy right now (e.g. the watch is down)
     */
    Optional<String> observed(String node, String key);
}
