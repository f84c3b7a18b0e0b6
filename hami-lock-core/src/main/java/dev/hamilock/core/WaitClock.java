package dev.hamilock.core;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.Condition;

/**
 * Time, sleeping and jitter of lock waits: the one seam through which {@code NodeLockAcquirer} and
 * {@link FairReleaseQueue} read the monotonic clock, sleep, wait for a wake-up and draw jitter
 * (design decision 8: time is injected). {@link #SYSTEM} is the real one; a test passes a clock
 * that steps virtual time, so the 28 s retry budget is checked without waiting 28 s.
 *
 * <p>Implementations must be thread-safe.
 */
public interface WaitClock {

  /**
   * @return a monotonic time in nanoseconds ({@link System#nanoTime()} scale, arbitrary origin)
   */
  long nanoTime();

  /**
   * Sleeps (a wait without a release signal to wake it).
   *
   * @param nanos how long, ns; positive
   * @throws InterruptedException if interrupted
   */
  void sleepNanos(long nanos) throws InterruptedException;

  /**
   * Waits on {@code condition} (its lock held by the caller) for at most {@code nanos}, as {@link
   * Condition#awaitNanos(long)}: may return early (signalled or spuriously); the caller re-checks
   * its state.
   *
   * @param condition the condition to wait on; its lock is held
   * @param nanos the longest wait, ns; positive
   * @return an estimate of the nanos left ({@code <= 0}: timed out)
   * @throws InterruptedException if interrupted
   */
  default long awaitNanos(Condition condition, long nanos) throws InterruptedException {
    return condition.awaitNanos(nanos);
  }

  /**
   * @param bound exclusive upper bound; positive
   * @return a uniformly random value in {@code [0, bound)}
   */
  long randomBelow(long bound);

  /**
   * The real one: {@link System#nanoTime()}, {@link Thread#sleep(long, int)}, {@link
   * Condition#awaitNanos(long)}, {@link ThreadLocalRandom}.
   */
  WaitClock SYSTEM =
      new WaitClock() {
        @Override
        public long nanoTime() {
          return System.nanoTime();
        }

        @Override
        public void sleepNanos(long nanos) throws InterruptedException {
          Thread.sleep(nanos / 1_000_000L, (int) (nanos % 1_000_000L));
        }

        @Override
        public long randomBelow(long bound) {
          return ThreadLocalRandom.current().nextLong(bound);
        }

        @Override
        public String toString() {
          return "WaitClock.SYSTEM";
        }
      };
}
