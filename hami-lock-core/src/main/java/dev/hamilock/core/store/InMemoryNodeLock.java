package dev.hamilock.core.store;

import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;

/**
 * In-process node locks ({@link StoreNodeLock} over an {@link InMemoryLockStore}) for a single
 * scheduler process and fast tests; other settings: {@link StoreNodeLock#create}.
 */
public final class InMemoryNodeLock {

  private InMemoryNodeLock() {}

  /**
   * A lock with {@link LockSettings#defaults()} over a fresh in-memory store.
   *
   * @throws IllegalArgumentException if {@code HAMI_NODELOCK_EXPIRE} is set but not a positive Go
   *     duration
   */
  public static NodeLock create() {
    return StoreNodeLock.create(new InMemoryLockStore(), LockSettings.defaults());
  }
}
