package dev.hamilock.core;

import java.time.Duration;

/**
 * A gang member's retry timeout ran out, with HAMi's message ({@code acquireNodeLocks}, {@code
 * pkg/scheduler/scheduler.go}): {@code timed out after 28s waiting for node worker-1 to be
 * unlocked: node lock contention}. The cause is the last contention.
 */
public final class LockWaitTimeoutException extends LockContentionException {

  private static final long serialVersionUID = 1L;

  private final int attempts;
  private final Duration waited;
  private final Duration retryTimeout;

  /** Copies node, key and holder from {@code lastContention}. */
  public LockWaitTimeoutException(
      String node,
      Duration retryTimeout,
      int attempts,
      Duration waited,
      LockContentionException lastContention) {
    super(
        "timed out after %s waiting for node %s to be unlocked"
            .formatted(GoDuration.format(retryTimeout), node),
        node,
        lastContention.key(),
        lastContention.holderValue(),
        lastContention.holder(),
        lastContention.age(),
        lastContention);
    this.attempts = attempts;
    this.waited = waited;
    this.retryTimeout = retryTimeout;
  }

  /** {@return the number of acquire attempts made, &ge; 1} */
  public int attempts() {
    return attempts;
  }

  /** {@return wall time spent from the first attempt until giving up} */
  public Duration waited() {
    return waited;
  }

  /** {@return the retry timeout that ran out} */
  public Duration retryTimeout() {
    return retryTimeout;
  }
}
