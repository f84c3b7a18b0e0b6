package dev.hamilock.core.store;

/**
 * Which (node, value) pairs were already reported at WARN, so a holder stuck allocating (HAMi#3096)
 * is warned about once per lock value, and at DEBUG on every later attempt. Bounded (least recently
 * used dropped: a dropped pair is warned about again). Thread-safe.
 */
final class OnceWarnings {

  private final BoundedMemo<NodeValue, Boolean> warned;

  /**
   * @param capacity pairs remembered; positive
   */
  OnceWarnings(int capacity) {
    this.warned = new BoundedMemo<>(capacity);
  }

  /**
   * @return {@code true} the first time it is called for this node and value, {@code false} after
   */
  boolean first(String node, String value) {
    return warned.putIfAbsent(new NodeValue(node, value), Boolean.TRUE) == null;
  }
}
