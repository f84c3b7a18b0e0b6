package dev.hamilock.core.internal;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one timer of {@code WaitClock.SYSTEM}: two daemon threads ({@code hami-lock-timer-N}) for
 * every lock wait of the process (issue 25 item 3: a waiting acquisition holds no thread, its wait
 * is a timer task or a release callback). Cancelled tasks leave the queue at once. Tasks must be
 * short and must not block: they hand work to an executor.
 */
public final class SharedTimer {
  /** The timer threads. */
  public static final int THREADS = 2;

  private static final ScheduledThreadPoolExecutor TIMER = create();

  private SharedTimer() {}

  private static ScheduledThreadPoolExecutor create() {
    AtomicInteger n = new AtomicInteger();
    ScheduledThreadPoolExecutor t =
        new ScheduledThreadPoolExecutor(
            THREADS,
            r -> {
              Thread th = new Thread(r, "hami-lock-timer-" + n.incrementAndGet());
              th.setDaemon(true);
              return th;
            });
    t.setRemoveOnCancelPolicy(true);
    return t;
  }

  /**
   * @param task what to run, short and non-blocking
   * @param nanos after how long, ns
   * @return the scheduled task, to cancel
   */
  public static ScheduledFuture<?> schedule(Runnable task, long nanos) {
    return TIMER.schedule(task, Math.max(0, nanos), TimeUnit.NANOSECONDS);
  }
}
