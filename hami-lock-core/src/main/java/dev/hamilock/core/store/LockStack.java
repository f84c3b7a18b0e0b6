package dev.hamilock.core.store;

import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import java.util.Optional;

/**
 * One key's node lock over a {@link LockBackend} and the acquire loop, from one {@link
 * LockSettings}; the clients' stacks extend it. {@link #close()} stops only a feeder it owns; the
 * lock stays usable and waiters poll. Thread-safe.
 */
public class LockStack implements AutoCloseable {

  private final StoreNodeLock nodeLock;
  private final NodeLockAcquirer acquirer;
  private final LockBackend backend;
  private final boolean ownsBackend;

  /**
   * Creates the key's lock, then, if {@code owns}, starts the backend (closed by {@link #close()};
   * else its owner starts and closes it).
   *
   * @throws NullPointerException if {@code settings} or {@code backend} is null
   */
  protected LockStack(LockSettings settings, LockBackend backend, boolean owns) {
    this.nodeLock = backend.nodeLock(settings); // the key's store before the feeder starts
    this.acquirer = NodeLockAcquirer.create(settings);
    this.backend = owns ? backend.start() : backend;
    this.ownsBackend = owns;
  }

  /** {@return the node lock (one attempt per call)} */
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
