package dev.hamilock.core;

import java.util.Optional;

/**
 * Port: wakes waiters when the lock on a node is released, so that a gang member hands off in one
 * round trip instead of up to one poll interval (100 ms, design decision 3). Polling stays the
 * floor, so a signal may be late or miss events without breaking correctness: a missed event costs
 * a waiter at most one poll.
 *
 * <p>A waiter {@linkplain #join(String) joins} the node's queue <em>before</em> the attempt that
 * may fail and closes its {@link Waiter} when the acquire call ends; a release in between is handed
 * to it and not lost. {@link FairReleaseQueue} is the implementation every backend uses (the
 * in-memory store, the bind test cluster, the Kubernetes node watch feed it): one waiter woken per
 * release, oldest first (HAMi#2589: no herd).
 *
 * <p><b>Reliable mode.</b> A signal that can currently <em>guarantee</em> to report every release
 * of a node's lock (a node watch that is connected and synced: a resumed watch replays the events
 * it missed, and a relist signals the differences it finds) says so through {@link
 * #isReliable(String)}. While it does, {@code NodeLockAcquirer} waits for it up to {@link
 * RetryPolicy#watchedPollInterval()} (default 1 s) — a safety net only — instead of re-polling
 * every {@link RetryPolicy#pollInterval()} (100 ms), which keeps a long queue of waiters from
 * costing a PATCH and a GET per waiter per 100 ms. The answer may change at any moment; the
 * acquirer re-asks at least once per poll interval, so a signal that stops being reliable costs a
 * waiter at most one poll interval of extra delay. Correctness never depends on the answer: every
 * wait is bounded, every attempt is a compare-and-set.
 */
public interface LockReleaseSignal {

  /**
   * Opens a place at the tail of {@code node}'s wake-up queue.
   *
   * @param node the node name
   * @return the waiter; close it when the acquire call ends
   * @throws NullPointerException if {@code node} is null
   */
  Waiter join(String node);

  /**
   * Whether this signal is, right now, guaranteed to report every release of {@code node}'s lock
   * (no missed events possible), so that waiters may stop fast polling. Must be cheap (no I/O): it
   * is asked once per poll interval per waiter.
   *
   * @param node the node name
   * @return {@code true} only while no release can be missed; the default, {@code false}, keeps
   *     waiters on the {@link RetryPolicy#pollInterval()} poll
   */
  default boolean isReliable(String node) {
    return false;
  }

  /**
   * Whether this process leaves {@code node}'s lock to others right now ({@link FairReleaseQueue}:
   * 200 ms after 5 s of continuous queue, so HAMi's 100 ms poller gets a turn; a few round trips
   * after a release when another scheduler won the last race here). While it does, {@code
   * StoreNodeLock} answers an attempt that would write a free lock with contention, without a
   * request. Cheap, no I/O.
   *
   * @param node the node name
   * @return {@code true} while the lock is left to others; the default, {@code false}, never
   */
  default boolean leavingTurn(String node) {
    return false;
  }

  /**
   * Claims {@code node}'s one slot for a waiter's compare-and-set in this process (issue 25 item
   * 4). While one waiter's attempt is in flight, another waiter of the same process can only lose
   * to it or to the holder it loses to, so {@code StoreNodeLock#acquireWaiting} answers it with
   * contention without a request: a gang's members released together (Coscheduling's Permit) send
   * one PATCH per scheduler process, not one each (with N members: N − 1 failed PATCHes and most of
   * their GETs). Non-waiting attempts ({@code acquire}, fail-fast pods) never ask. Cheap, no I/O.
   *
   * @param node the node name
   * @return the slot, to {@linkplain Attempt#end end} exactly once when the attempt ends; empty
   *     while another attempt of this process on {@code node} holds it; the default: always {@link
   *     Attempt#UNTRACKED}
   */
  default Optional<Attempt> beginAttempt(String node) {
    return Optional.of(Attempt.UNTRACKED);
  }

  /** A slot claimed by {@link #beginAttempt}. */
  interface Attempt {
    /** A slot nobody tracks: ending it does nothing. */
    Attempt UNTRACKED = how -> {};

    /** How an attempt ended, as far as the node's queue cares. */
    enum End {
      /** It took the lock. */
      WON,
      /** It met a value this process wrote, or only asked: nothing changes. */
      HELD_HERE,
      /**
       * It met a value another process wrote: after the next release this process waits a few round
       * trips before it attempts, so that the schedulers racing for a node do not all send a losing
       * compare-and-set (the one that won last goes first).
       */
      HELD_ELSEWHERE,
      /**
       * Neither won nor met a holder (e.g. a backend error): the lock may be free, so the queue
       * hands a wake-up to its oldest waiter and the waiters held back by this slot do not wait for
       * a release that will not come.
       */
      UNDECIDED
    }

    /**
     * Frees the slot; later calls do nothing.
     *
     * @param how how the attempt ended
     */
    void end(End how);
  }
}
