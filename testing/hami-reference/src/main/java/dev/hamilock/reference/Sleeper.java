package dev.hamilock.reference;

import java.time.Duration;

/**
 * How the reference algorithms wait: the inner backoff of {@link HamiNodeLock} and the fixed poll
 * of {@link HamiBindLocking}. The default sleeps for real ({@link Thread#sleep}); tests inject a
 * recording or virtual-time sleeper.
 */
@FunctionalInterface
public interface Sleeper {

  /** Real sleeping with {@link Thread#sleep(long, int)}. */
  Sleeper REAL =
      duration -> Thread.sleep(duration.toMillis(), (int) (duration.toNanos() % 1_000_000L));

  /**
   * Waits for {@code duration}.
   *
   * @param duration non-negative time to wait
   * @throws InterruptedException if the waiting thread is interrupted
   */
  void sleep(Duration duration) throws InterruptedException;
}
