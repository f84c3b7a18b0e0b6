package dev.hamilock.core.store;

import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;

/**
 * Factory for in-process node locks ({@link StoreNodeLock} over an {@link InMemoryLockStore}): the
 * embedded default for a single scheduler process and the backend for fast tests. It has the same
 * semantics as the Kubernetes backend, including the release signal. Other settings: {@link
 * StoreNodeLock#create(LockStore, LockSettings)} over a {@link InMemoryLockStore}.
 */
public final class InMemoryNodeLock {

  private InMemoryNodeLock() {}

  /**
   * A node lock on key {@code hami.io/mutex.lock} over a fresh in-memory store, with the lock
   * timeout from {@code HAMI_NODELOCK_EXPIRE} or 5 min, the system clock and no dangling checks.
   *
   * @throws IllegalArgumentException if {@code HAMI_NODELOCK_EXPIRE} is set but not a positive Go
   *     duration
   */
  public static NodeLock create() {
    return StoreNodeLock.create(new InMemoryLockStore(), LockSettings.defaults());
  }
}
