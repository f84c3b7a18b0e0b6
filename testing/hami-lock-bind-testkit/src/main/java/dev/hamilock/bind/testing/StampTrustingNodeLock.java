package dev.hamilock.bind.testing;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.ObservedValueRelease;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Falsification stand-in for the confirmation before issue 23's fault 1 fix: a real lock whose
 * {@link #stillHeld} answers {@code true} without reading the store while the stamp this instance
 * wrote for the owner is younger than half the lock timeout (as {@code StoreNodeLock} did before
 * commit 8e53fe9); older stamps and everything else go to the real lock. A lock removed by another
 * writer and taken by another pod then goes unnoticed until the Binding.
 */
public final class StampTrustingNodeLock implements NodeLock {
  private final NodeLock lock;
  private final InstantSource clock;
  private final Map<String, Stamp> stamps = new ConcurrentHashMap<>();

  private record Stamp(LockOwner owner, Instant at) {}

  /**
   * @param clock the clock stamps are aged by (the run's clock)
   */
  public StampTrustingNodeLock(NodeLock lock, InstantSource clock) {
    this.lock = Objects.requireNonNull(lock, "lock");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public String key() {
    return lock.key();
  }

  @Override
  public Duration lockTimeout() {
    return lock.lockTimeout();
  }

  @Override
  public AcquireOutcome acquire(String node, LockOwner owner)
      throws LockContentionException, LockBackendException {
    AcquireOutcome o = lock.acquire(node, owner);
    stamps.put(node, new Stamp(owner, clock.instant()));
    return o;
  }

  @Override
  public boolean release(String node, LockOwner owner) throws LockBackendException {
    stamps.remove(node);
    return lock.release(node, owner);
  }

  @Override
  public Optional<ObservedValueRelease> observedValueRelease() {
    return lock.observedValueRelease()
        .map(
            byValue ->
                (node, owner, observedValue) -> {
                  stamps.remove(node);
                  return byValue.release(node, owner, observedValue);
                });
  }

  /** {@inheritDoc} Here: {@code true} from a young own stamp, without a read (the old rule). */
  @Override
  public boolean stillHeld(String node, LockOwner owner) throws LockBackendException {
    Stamp s = stamps.get(node);
    if (s != null
        && s.owner().isSameOwner(owner)
        && Duration.between(s.at(), clock.instant()).compareTo(lock.lockTimeout().dividedBy(2))
            <= 0) {
      return true;
    }
    return lock.stillHeld(node, owner);
  }

  @Override
  public Optional<String> readValue(String node) throws LockBackendException {
    return lock.readValue(node);
  }

  @Override
  public Optional<LockRecord> read(String node)
      throws MalformedLockException, LockBackendException {
    return lock.read(node);
  }

  @Override
  public Optional<LockReleaseSignal> releaseSignal() {
    return lock.releaseSignal();
  }
}
