package dev.hamilock.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Monotonic time, timers and jitter of lock waits, injected (design decision 8) so tests step
 * virtual time. Thread-safe.
 */
public interface WaitClock {

  /** {@return a monotonic time in nanoseconds, as {@link System#nanoTime()}} */
  long nanoTime();

  /**
   * Sleeps {@code nanos} (positive).
   *
   * @throws InterruptedException if interrupted
   */
  void sleepNanos(long nanos) throws InterruptedException;

  /**
   * Runs {@code task} (short, non-blocking) once {@code nanos} have passed, on a timer thread; the
   * default, for virtual clocks, {@linkplain #sleepNanos sleeps} the caller and runs it there.
   *
   * @return the scheduled task, to {@link Future#cancel cancel} when no longer needed
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

  /** {@return a uniformly random value in {@code [0, bound)}; {@code bound} positive} */
  long randomBelow(long bound);

  /** The real one; its timer is two shared daemon threads. */
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
