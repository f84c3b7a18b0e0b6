package dev.hamilock.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Time, sleeping and jitter of lock waits: the one seam through which {@code NodeLockAcquirer} and
 * {@link FairReleaseQueue} read the monotonic clock, set timers for waits and draw jitter (design
 * decision 8: time is injected). {@link #SYSTEM} is the real one; a test passes a clock that steps
 * virtual time, so the 28 s retry budget is checked without waiting 28 s.
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
   * A timer: runs {@code task} once {@code nanos} have passed on this clock, without holding the
   * calling thread (a lock wait is a timer task or a release callback, never a parked thread).
   * {@link #SYSTEM} runs it on a shared timer of two daemon threads; the default, for virtual
   * clocks, {@linkplain #sleepNanos sleeps} the calling thread and then runs it there (an interrupt
   * ends the sleep early and stays set).
   *
   * @param task what to run; short and non-blocking (it hands work on to an executor)
   * @param nanos the delay, ns; positive
   * @return the scheduled task: {@link Future#cancel cancel} it when it is no longer needed
   */
  default Future<?> schedule(Runnable task, long nanos) {
    try {
      sleepNanos(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    task.run();
    return CompletableFuture.completedFuture(null);
  }

  /**
   * @param bound exclusive upper bound; positive
   * @return a uniformly random value in {@code [0, bound)}
   */
  long randomBelow(long bound);

  /**
   * The real one: {@link System#nanoTime()}, {@link Thread#sleep(long, int)}, a shared timer of two
   * daemon threads, {@link ThreadLocalRandom}.
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

        /** Two daemon threads, started on first use, for every lock wait of the process. */
        private final ScheduledThreadPoolExecutor timer = timer();

        private ScheduledThreadPoolExecutor timer() {
          AtomicInteger n = new AtomicInteger();
          ScheduledThreadPoolExecutor t =
              new ScheduledThreadPoolExecutor(
                  2,
                  r -> {
                    Thread th = new Thread(r, "hami-lock-timer-" + n.incrementAndGet());
                    th.setDaemon(true);
                    return th;
                  });
          t.setRemoveOnCancelPolicy(true);
          return t;
        }

        @Override
        public Future<?> schedule(Runnable task, long nanos) {
          return timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
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
