package dev.hamilock.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * One waiter's place in a node's wake-up queue ({@link LockReleaseSignal#join(String)}), held by
 * one acquire call; the handle is the concurrency token, passed as a value (never a thread-local),
 * so a waiter moving between threads keeps its place. A wake-up handed while the waiter is busy is
 * kept; one unconsumed at {@link #close()} passes to the next waiter. One acquire call uses it at a
 * time; {@link #close()} may come from any thread.
 */
public interface Waiter extends AutoCloseable {

  /** {@return the node this waiter waits for} */
  String node();

  /**
   * Waits for a wake-up or the timeout, holding no thread: the future completes on the feeder's or
   * the timer's thread (dependents must not block); cancelling it withdraws the wait.
   *
   * @param timeout the longest wait; zero or negative only consumes a wake-up already held
   * @return a future of whether a wake-up was consumed ({@code false}: timeout or closed)
   * @throws IllegalStateException if this waiter is closed or already has a wait pending
   * @throws NullPointerException if {@code timeout} is null
   */
  CompletableFuture<Boolean> awaitAsync(Duration timeout);

  /**
   * {@link #awaitAsync} joined: whether a wake-up was consumed before the timeout.
   *
   * @throws InterruptedException if the thread is interrupted (a wake-up held stays held)
   * @throws IllegalStateException if this waiter is closed
   * @throws NullPointerException if {@code timeout} is null
   */
  default boolean await(Duration timeout) throws InterruptedException {
    CompletableFuture<Boolean> f = awaitAsync(timeout);
    try {
      return f.get();
    } catch (InterruptedException e) {
      if (f.cancel(false)) {
        throw e;
      }
      Thread.currentThread().interrupt(); // the wait ended meanwhile: its answer is kept
      return f.join();
    } catch (ExecutionException e) {
      throw new IllegalStateException("wait for node " + node() + " failed", e.getCause());
    }
  }

  /**
   * Drops a wake-up held, without passing it on (after the caller's own rollback released the lock,
   * which is no reason to retry at once); returns whether one was dropped.
   */
  boolean drain();

  /**
   * Leaves the queue, passing on a wake-up held; a wait in progress returns {@code false}, unless a
   * wake-up was handed to it before the close: then it returns {@code true} (perhaps after this
   * returns), and that wake-up is the caller's to use or to hand on (as an attempt that decided
   * nothing, {@link LockReleaseSignal.Attempt.End#UNDECIDED}). Idempotent; never throws.
   */
  @Override
  void close();
}
