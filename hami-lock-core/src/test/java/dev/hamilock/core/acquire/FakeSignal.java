package dev.hamilock.core.acquire;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.Waiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntPredicate;

/**
 * The production {@link FairReleaseQueue} with a scripted reliability (decided per {@code
 * isReliable} call, by call number) and a record of every {@link Waiter#await} with its entry time
 * and timeout; {@link #fire()} is a release of the lock.
 */
final class FakeSignal implements LockReleaseSignal {

  /** One {@code await} call. */
  record Wait(long askedNanos, long timeoutNanos, int attemptsBefore, boolean changed) {
    /**
     * @return the latest instant this wait may end, from a time taken before the acquirer's clock
     *     read
     */
    long endNanos() {
      return askedNanos + timeoutNanos;
    }
  }

  private final IntPredicate reliableOnCall;
  private final List<Wait> waits = new ArrayList<>();
  private final FairReleaseQueue queue;
  private int reliableCalls;
  private long lastAskedNanos;

  /** Set by the test: how many lock attempts happened so far (to group waits by attempt). */
  volatile int attempts;

  /** Called when a wait starts, with its number; may fire the signal. */
  volatile java.util.function.IntConsumer onWait = n -> {};

  /** Null: waits take real time. Otherwise a wait without a wake-up advances this clock instead. */
  private final SteppedClock clock;

  FakeSignal(IntPredicate reliableOnCall) {
    this(reliableOnCall, null);
  }

  /** A signal whose waits take virtual time on {@code clock} (the acquirer's clock too). */
  FakeSignal(IntPredicate reliableOnCall, SteppedClock clock) {
    this.reliableOnCall = reliableOnCall;
    this.clock = clock;
    this.queue = FairReleaseQueue.create(node -> false, clock != null ? clock : WaitClock.SYSTEM);
  }

  /**
   * @return the time on this signal's clock: the stepped clock if any, else {@link
   *     System#nanoTime()}
   */
  long now() {
    return clock != null ? clock.nanoTime() : System.nanoTime();
  }

  @Override
  public Waiter join(String node) {
    Waiter w = queue.join(node);
    return new Waiter() {
      @Override
      public String node() {
        return w.node();
      }

      @Override
      public CompletableFuture<Boolean> awaitAsync(Duration timeout) {
        int n;
        synchronized (FakeSignal.this) {
          n = waits.size();
        }
        onWait.accept(n);
        return w.awaitAsync(timeout)
            .thenApply(
                changed -> {
                  synchronized (FakeSignal.this) {
                    waits.add(
                        new Wait(
                            lastAskedNanos, Math.max(0, timeout.toNanos()), attempts, changed));
                  }
                  return changed;
                });
      }

      @Override
      public boolean drain() {
        return w.drain();
      }

      @Override
      public void close() {
        w.close();
      }
    };
  }

  @Override
  public synchronized boolean isReliable(String node) {
    lastAskedNanos = now(); // the acquirer reads its clock after asking
    return reliableOnCall.test(reliableCalls++);
  }

  /** A release of the lock on every node with waiters: wakes the oldest waiter of each. */
  void fire() {
    queue.nodesWithWaiters().forEach(queue::released);
  }

  /**
   * @return the queue behind this signal
   */
  FairReleaseQueue queue() {
    return queue;
  }

  synchronized List<Wait> waits() {
    return List.copyOf(waits);
  }
}
