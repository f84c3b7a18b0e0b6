package dev.hamilock.core.store;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.OwnerLiveness;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/**
 * {@code ALIVE} owner-liveness answers reused for {@link
 * dev.hamilock.core.LockSettings#livenessCacheTtl}, keyed by node and exact lock value; concurrent
 * checks of one value share a call; gone answers and errors are never kept, so the cache can only
 * delay a takeover by one TTL. Bounded, least recently used dropped. Thread-safe.
 */
final class LivenessCache {

  private final OwnerLiveness liveness;
  private final Duration ttl;
  private final InstantSource clock;

  /** (node, exact lock value) → when its owner was last found alive; one monitor per value. */
  private final BoundedMemo<NodeValue, AliveEntry> alive;

  LivenessCache(OwnerLiveness liveness, Duration ttl, InstantSource clock, int capacity) {
    this.liveness = liveness;
    this.ttl = ttl;
    this.clock = clock;
    this.alive = new BoundedMemo<>(capacity);
  }

  /**
   * A cached {@code ALIVE} answer younger than the TTL, else the port's; {@code REJECTED} if the
   * port throws an unchecked exception or answers null.
   */
  OwnerLiveness.HolderStatus status(String node, String value, LockOwner holder)
      throws LockBackendException {
    if (ttl.isZero()) {
      return ask(holder);
    }
    NodeValue k = new NodeValue(node, value);
    AliveEntry entry = alive.computeIfAbsent(k, x -> new AliveEntry());
    synchronized (entry) {
      Instant asked = clock.instant();
      if (entry.aliveAt != null
          && !asked.isBefore(entry.aliveAt)
          && Ages.between(entry.aliveAt, asked).compareTo(ttl) < 0) {
        return entry.status;
      }
      OwnerLiveness.HolderStatus status = ask(holder);
      if (status.state() == OwnerLiveness.State.ALIVE) {
        entry.aliveAt = asked;
        entry.status = status;
      } else {
        entry.aliveAt = null;
        entry.status = null;
        alive.remove(k, entry);
      }
      return status;
    }
  }

  /** {@code value} left {@code node}: drop its answer. */
  void gone(String node, String value) {
    alive.remove(new NodeValue(node, value));
  }

  private OwnerLiveness.HolderStatus ask(LockOwner holder) throws LockBackendException {
    OwnerLiveness.HolderStatus status;
    try {
      status = liveness.status(holder);
    } catch (RuntimeException e) {
      throw new LockBackendException(
          LockBackendException.Kind.REJECTED,
          "owner liveness check failed for " + holder + ": " + e,
          e);
    }
    if (status == null) {
      throw new LockBackendException(
          LockBackendException.Kind.REJECTED,
          "owner liveness check returned null for " + holder,
          null);
    }
    return status;
  }

  /** The last {@code ALIVE} answer for one value and its time; its monitor serialises checks. */
  private static final class AliveEntry {
    Instant aliveAt;
    OwnerLiveness.HolderStatus status;
  }
}
