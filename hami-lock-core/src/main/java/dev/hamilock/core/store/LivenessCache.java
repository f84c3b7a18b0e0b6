package dev.hamilock.core.store;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.OwnerLiveness;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/**
 * Owner-liveness answers for lock holders, an {@code ALIVE} answer reused for a TTL (see {@link
 * dev.hamilock.core.LockSettings#livenessCacheTtl}): keyed by node and <em>exact</em> lock value,
 * so a re-stamp or a new holder is a new key; concurrent checks of the same value share one call;
 * gone answers and errors are never kept, so the cache can delay a takeover by at most one TTL and
 * never cause one. TTL {@code 0} asks every time (HAMi's behaviour). Ages are measured with the
 * lock's clock; a clock that steps back makes an answer stale. Bounded (least recently used values
 * dropped). Thread-safe.
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

  /**
   * Time and answer of the last {@code ALIVE} answer for one lock value; its monitor serialises
   * checks.
   */
  private static final class AliveEntry {
    Instant aliveAt;
    OwnerLiveness.HolderStatus status;
  }
}
