package dev.hamilock.core;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Observer of node-lock events, e.g. for metrics. All methods default to no-ops and are called
 * synchronously on the acting thread, so implementations must be fast and should not throw; {@link
 * #NOOP} costs one virtual call per event and allocates nothing. The lock code ({@code
 * StoreNodeLock}, {@code NodeLockAcquirer}) calls its listener through {@link
 * #guarded(NodeLockListener)}: an exception from a listener is logged at WARN and never changes a
 * lock operation's result (a lock taken is reported as taken, so it is released).
 */
public interface NodeLockListener {

  /** The listener that ignores every event. */
  NodeLockListener NOOP = new NodeLockListener() {};

  /**
   * Wraps {@code listener} so that a {@link RuntimeException} it throws is logged at WARN (naming
   * the event) instead of propagating into the lock operation that reported the event.
   *
   * @param listener the listener; not null
   * @return {@link #NOOP} itself, an already guarded listener itself, else the guarding wrapper
   * @throws NullPointerException if {@code listener} is null
   */
  static NodeLockListener guarded(NodeLockListener listener) {
    Objects.requireNonNull(listener, "listener");
    return listener == NOOP || (listener instanceof ForwardingListener f && f.guarded)
        ? listener
        : new ForwardingListener(List.of(listener), true);
  }

  /**
   * A listener that forwards every event to each of {@code listeners}, in list order, e.g. to give
   * one acquire loop the listeners of several lock backends (each may need {@link #waited} to end
   * per-thread state such as a place in a wake-up queue).
   *
   * @param listeners the listeners; copied; none null
   * @return {@link #NOOP} for an empty list, the listener itself for a single one, else the
   *     forwarding listener
   * @throws NullPointerException if {@code listeners} is null or contains null
   */
  static NodeLockListener all(List<? extends NodeLockListener> listeners) {
    Objects.requireNonNull(listeners, "listeners");
    listeners.forEach(l -> Objects.requireNonNull(l, "listeners must not contain null"));
    List<NodeLockListener> copy = List.copyOf(listeners);
    if (copy.size() > 1) {
      return new ForwardingListener(copy, false);
    }
    return copy.isEmpty() ? NOOP : copy.get(0);
  }

  /**
   * {@code owner} obtained lock {@code key} on {@code node} (for takeovers, after {@link
   * #takenOver}).
   */
  default void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {}

  /** An attempt found the lock held by someone else (node, key, holder value and age). */
  default void contended(LockContentionException contention) {}

  /** {@code owner}'s lock {@code key} on {@code node} was removed by its release. */
  default void released(String node, String key, LockOwner owner) {}

  /**
   * An expired or dangling lock ({@code previousValue}, verbatim) was replaced by {@code owner}'s;
   * {@code reason} is {@link AcquireOutcome#TOOK_OVER_EXPIRED} or {@code TOOK_OVER_DANGLING}.
   */
  default void takenOver(
      String node, String key, LockOwner owner, String previousValue, AcquireOutcome reason) {}

  /**
   * An acquire call of the acquire loop ended after {@code attempts} (&ge; 1) in {@code waited}
   * (wall time from the first attempt to the end); {@code acquired}: the locks were obtained.
   */
  default void waited(
      String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {}
}
