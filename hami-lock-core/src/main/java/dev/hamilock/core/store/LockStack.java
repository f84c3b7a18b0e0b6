package dev.hamilock.core.store;

import dev.hamilock.core.LockSettings;
import dev.hamilock.core.acquire.NodeLockAcquirer;

/**
 * What client-java's {@code KubernetesLockStack} and fabric8's {@code Fabric8LockStack} share: one
 * key's HAMi node lock ({@code hami.io/mutex.lock}, HAMi's {@code pkg/util/nodelock/nodelock.go})
 * over a {@link LockBackend}, and the acquire loop, both from one {@link LockSettings}.
 *
 * @param nodeLock the key's lock ({@link LockBackend#nodeLock})
 * @param acquirer the acquire loop ({@link NodeLockAcquirer#create})
 * @param backend the backend; its {@link LockBackend#releases()} is the key's watch
 * @param ownsBackend whether {@link #close()} closes {@code backend}
 */
public record LockStack(
    StoreNodeLock nodeLock, NodeLockAcquirer acquirer, LockBackend backend, boolean ownsBackend)
    implements AutoCloseable {

  /**
   * Creates the key's lock, then, if {@code owns}, starts the backend's release feeder.
   *
   * @param settings the lock settings, key included
   * @param backend the backend
   * @param owns true: started here and closed by {@link #close()}; false: its owner starts it
   *     (after creating every key's lock) and closes it
   * @return the stack
   * @throws NullPointerException if {@code settings} or {@code backend} is null
   */
  public static LockStack create(LockSettings settings, LockBackend backend, boolean owns) {
    StoreNodeLock lock = backend.nodeLock(settings); // the key's store before the feeder starts
    return new LockStack(
        lock, NodeLockAcquirer.create(settings), owns ? backend.start() : backend, owns);
  }

  /** Stops the backend's feeder if this stack owns it; the lock stays usable. Idempotent. */
  @Override
  public void close() {
    if (ownsBackend) {
      backend.close();
    }
  }

  /** {@return {@code <lock>, watch=<feeder or off>}} */
  @Override
  public String toString() {
    return nodeLock + ", watch=" + backend.releases().map(Object::toString).orElse("off");
  }
}
