package dev.hamilock.core.store;

import java.time.Instant;

/**
 * When this process first saw each node's current value (the clock-skew rule's memo); another value
 * or a free node starts afresh. Bounded, least recently used dropped: a dropped count only delays a
 * takeover. Thread-safe.
 */
final class FirstSightings {

  private final BoundedMemo<String, Sighting> byNode;

  FirstSightings(int capacity) {
    this.byNode = new BoundedMemo<>(capacity);
  }

  /** When {@code value} was first seen on {@code node}: the remembered time, else now (kept). */
  Instant firstSeen(String node, String value, Instant now) {
    synchronized (byNode) {
      Sighting seen = byNode.get(node);
      if (seen == null || !seen.value.equals(value)) {
        seen = new Sighting(value, now);
        byNode.put(node, seen);
      }
      return seen.at;
    }
  }

  /** The node was seen free: whatever was there before is gone. */
  void nodeFree(String node) {
    byNode.remove(node);
  }

  /** {@code value} left {@code node} (released or replaced by this process): forget it. */
  void gone(String node, String value) {
    synchronized (byNode) {
      Sighting seen = byNode.get(node);
      if (seen != null && seen.value.equals(value)) {
        byNode.remove(node);
      }
    }
  }

  private record Sighting(String value, Instant at) {}
}
