package dev.hamilock.core.store;

import dev.hamilock.core.NodeLock;

/**
 * Factory for in-process node locks ({@link StoreNodeLock} over an {@link InMemoryLockStore}): the
 * embedded default for a single scheduler process and the backend for fast tests. It has the same
 * semantics as the Kubernetes backend, including the release signal.
 */
public final class InMemoryNodeLock {

  private InMemoryNodeLock() {}

  /**
   * A node lock on key {@code hami.io/mutex.lock} over a fresh in-memory store, with the lock
   * timeout from {@code HAMI_NODELOCK_EXPIRE} or 5 min, the system clock and no dangling checks.
   *
   * @return the lock
   * @throws IllegalArgumentException if {@code HAMI_NODELOCK_EXPIRE} is set but not a positive Go
   *     duration
   */
  public static NodeLock create() {
    return builder().build();
  }

  /**
   * @return a {@link StoreNodeLock} builder over a fresh in-memory store, to set key, timeout,
   *     clock, owner liveness or listener
   */
  public static StoreNodeLock.Builder builder() {
    return StoreNodeLock.builder(new InMemoryLockStore());
  }
}
