package dev.hamilock.bind.testing;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.NodeLock;
import java.time.Duration;
import java.util.Optional;

/**
 * A deliberately broken {@link NodeLock} that never excludes anyone and records nothing: acquire
 * always succeeds, release always "releases", read finds no lock, and the lock is always "still
 * held" (so the bind flow's check before the Binding does not turn it into a working lock). Only
 * for the falsification ("teeth") tests, which show the gang-bind property fails without a real
 * lock.
 */
public final class NoOpNodeLock implements NodeLock {
  private final String key;

  /**
   * @param key the key it pretends to lock
   */
  public NoOpNodeLock(String key) {
    this.key = key;
  }

  @Override
  public String key() {
    return key;
  }

  @Override
  public Duration lockTimeout() {
    return DEFAULT_LOCK_TIMEOUT;
  }

  @Override
  public AcquireOutcome acquire(String node, LockOwner owner) {
    return AcquireOutcome.ACQUIRED;
  }

  @Override
  public boolean release(String node, LockOwner owner) {
    return true;
  }

  @Override
  public boolean stillHeld(String node, LockOwner owner) {
    return true;
  }

  @Override
  public Optional<LockRecord> read(String node) {
    return Optional.empty();
  }
}
