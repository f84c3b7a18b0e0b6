package dev.hamilock.core.store;

import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import java.util.Optional;

/**
 * One key's HAMi node lock ({@code hami.io/mutex.lock}, HAMi's {@code
 * pkg/util/nodelock/nodelock.go}) over a {@link LockBackend}, and the acquire loop, both from one
 * {@link LockSettings}: what client-java's {@code KubernetesLockStack} and fabric8's {@code
 * Fabric8LockStack} are (each adds its client's builder).
 *
 * <p>{@link #close()} stops only a release feeder this stack owns; the lock stays usable afterwards
 * and waiters then poll every 100 ms. Thread-safe.
 */
public class LockStack implements AutoCloseable {

  private final StoreNodeLock nodeLock;
  private final NodeLockAcquirer acquirer;
  private final LockBackend backend;
  private final boolean ownsBackend;

  /**
   * Creates the key's lock, then, if {@code owns}, starts the backend's release feeder.
   *
   * @param settings the lock settings, key included
   * @param backend the backend; its {@link LockBackend#releases()} is the key's watch
   * @param owns true: started here and closed by {@link #close()}; false: its owner starts it
   *     (after creating every key's lock) and closes it
   * @throws NullPointerException if {@code settings} or {@code backend} is null
   */
  protected LockStack(LockSettings settings, LockBackend backend, boolean owns) {
    this.nodeLock = backend.nodeLock(settings); // the key's store before the feeder starts
    this.acquirer = NodeLockAcquirer.create(settings);
    this.backend = owns ? backend.start() : backend;
    this.ownsBackend = owns;
  }

  /**
   * @return the node lock (one attempt per call; HAMi semantics with this library's improvements)
   */
  public StoreNodeLock nodeLock() {
    return nodeLock;
  }

  /** {@return the gang-aware acquire loop configured with the retry policy} */
  public NodeLockAcquirer acquirer() {
    return acquirer;
  }

  /** {@return the backend store (one request per operation)} */
  public LockStore store() {
    return nodeLock.store();
  }

  /** {@return the release signal waiters wake on, empty if the watch is off} */
  public Optional<LockReleaseSignal> releaseSignal() {
    return nodeLock.releaseSignal();
  }

  /** {@return the release feeder of this key's wake-up queue (own or shared), empty if off} */
  public Optional<ReleaseFeeder> watch() {
    return backend.releases();
  }

  /** Stops the backend's feeder if this stack owns it; the lock stays usable. Idempotent. */
  @Override
  public void close() {
    if (ownsBackend) {
      backend.close();
    }
  }

  /** {@return {@code <class>[<lock>, watch=<feeder or off>]}} */
  @Override
  public String toString() {
    String watch = backend.releases().map(Object::toString).orElse("off");
    return "%s[%s, watch=%s]".formatted(getClass().getSimpleName(), nodeLock, watch);
  }
}
