package dev.hamilock.core;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Observer of node-lock events, e.g. for metrics; every method defaults to a no-op and is called
 * synchronously on the acting thread (be fast). The lock code calls it through {@link #guarded}.
 */
public interface NodeLockListener {

  /** The listener that ignores every event. */
  NodeLockListener NOOP = new NodeLockListener() {};

  /**
   * {@code listener} with a {@link RuntimeException} it throws logged at WARN instead of changing
   * the lock operation's result ({@link #NOOP} and guarded listeners as they are).
   *
   * @throws NullPointerException if {@code listener} is null
   */
  static NodeLockListener guarded(NodeLockListener listener) {
    Objects.requireNonNull(listener, "listener");
    return listener == NOOP || (listener instanceof ForwardingListener f && f.guarded)
        ? listener
        : new ForwardingListener(List.of(listener), true);
  }

  /**
   * A listener forwarding every event to each of {@code listeners} in order ({@link #NOOP} for
   * none, the listener itself for one).
   *
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

  /** {@code owner} obtained lock {@code key} on {@code node} (after {@link #takenOver}). */
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
