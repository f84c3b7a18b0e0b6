package dev.hamilock.testkit;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fault rule installed with {@link ApiServerEmulator#addFault(FaultRule)}: tells how often it
 * fired and can remove it. Thread-safe.
 */
public final class FaultHandle {
  private final FaultRule rule;
  private final AtomicInteger remaining;
  private final AtomicInteger hits = new AtomicInteger();
  private volatile boolean removed;

  FaultHandle(FaultRule rule) {
    this.rule = rule;
    this.remaining = new AtomicInteger(rule.times());
  }

  public FaultRule rule() {
    return rule;
  }

  /**
   * @return how many requests this rule has affected so far
   */
  public int hits() {
    return hits.get();
  }

  /**
   * @return whether the rule can still fire (not removed and hits left)
   */
  public boolean isActive() {
    return !removed && (rule.times() < 0 || remaining.get() > 0);
  }

  /** Stops the rule from firing again; idempotent. */
  public void remove() {
    removed = true;
  }

  /** Atomically consumes one hit if the rule matches and is active. */
  boolean tryTake(RequestInfo info) {
    if (removed || !rule.matches(info)) {
      return false;
    }
    if (rule.times() >= 0) {
      int left;
      do {
        left = remaining.get();
        if (left <= 0) {
          return false;
        }
      } while (!remaining.compareAndSet(left, left - 1));
    }
    hits.incrementAndGet();
    return true;
  }
}
