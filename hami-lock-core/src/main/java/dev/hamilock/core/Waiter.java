package dev.hamilock.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * One waiter's place in a node's wake-up queue ({@link LockReleaseSignal#join(String)}), held by
 * one acquire call for as long as it may wait: {@code try (Waiter w = signal.join(node)) { ... }}.
 * The handle is the concurrency token, passed as a value (never a thread-local or a thread
 * identity), so a pooled thread that comes back with another pod starts at the tail, and a waiter
 * that moves between threads keeps its place.
 *
 * <p>A release of the node's lock hands one <em>wake-up</em> to the oldest waiter that does not
 * hold one yet; {@link #awaitAsync(Duration)} consumes it. A wake-up handed over while the waiter
 * is busy (between {@code join} and {@code await}, e.g. during its own attempt) is kept, so no
 * release is lost; one left unconsumed at {@link #close()} passes to the next waiter.
 *
 * <p>Not for concurrent use by several threads at once (one acquire call owns it); {@link #close()}
 * may be called from any thread, and ends a wait in progress: its future completes with {@code
 * false} at once.
 */
public interface Waiter extends AutoCloseable {

  /** {@return the node this waiter waits for} */
  String node();

  /**
   * Waits for a wake-up handed to this waiter, or the timeout, holding no thread: the returned
   * future is completed by whoever hands the wake-up (the release feeder's thread, e.g. a node
   * watch's) or by the clock's timer, so its dependents must be short and non-blocking. Cancelling
   * the future withdraws the wait without consuming a wake-up.
   *
   * @param timeout the longest wait; zero or negative only consumes a wake-up already held
   * @return a future of {@code true} if a wake-up was consumed (a release of the node's lock), of
   *     {@code false} on timeout or when {@link #close()} ended the wait
   * @throws IllegalStateException if this waiter is closed or already has a wait pending
   * @throws NullPointerException if {@code timeout} is null
   */
  CompletableFuture<Boolean> awaitAsync(Duration timeout);

  /**
   * Waits for a wake-up handed to this waiter, or the timeout, blocking the calling thread: {@link
   * #awaitAsync} joined.
   *
   * @param timeout the longest wait; zero or negative only consumes a wake-up already held
   * @return {@code true} if a wake-up was consumed (a release of the node's lock), {@code false} on
   *     timeout or when {@link #close()} (from another thread) ended the wait
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
   * Drops a wake-up held and not yet consumed, without passing it on. The acquire loop calls it
   * after its own rollback released a lock of the node: that release is its own doing and must not
   * make it (or, by passing it on, two waiters in turn) retry at once; a holder's release that
   * raced with the rollback is then found by the next poll.
   *
   * @return whether a wake-up was dropped
   */
  boolean drain();

  /**
   * Leaves the queue; a wake-up held and not consumed passes to the next waiter. Callable from any
   * thread: a thread inside {@link #await} is woken and its {@code await} returns {@code false}
   * (its next {@code await} throws {@link IllegalStateException}). Idempotent; never throws.
   */
  @Override
  void close();
}
