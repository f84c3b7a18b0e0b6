package dev.hamilock.core;

import java.util.Optional;

/**
 * Port: wakes waiters when the lock on a node is released, so a gang member hands off in one round
 * trip instead of a poll (design decision 3). Polling stays the floor: a missed event costs a
 * waiter at most one poll. A waiter {@linkplain #join(String) joins} <em>before</em> the attempt
 * that may fail and closes its {@link Waiter} when the call ends, so no release in between is lost.
 * {@link FairReleaseQueue} is the implementation every backend feeds.
 *
 * <p>While {@link #isReliable(String)} (a connected, synced node watch), the acquirer waits up to
 * {@link RetryPolicy#watchedPollInterval()} (1 s) instead of polling every {@link
 * RetryPolicy#pollInterval()} (100 ms); it re-asks every poll interval, and correctness never
 * depends on the answer.
 */
public interface LockReleaseSignal {

  /**
   * Opens a place at the tail of {@code node}'s wake-up queue; close it when the call ends.
   *
   * @throws NullPointerException if {@code node} is null
   */
  Waiter join(String node);

  /**
   * Whether no release of {@code node}'s lock can be missed right now; cheap, no I/O (asked once
   * per poll interval per waiter). Default {@code false}.
   */
  default boolean isReliable(String node) {
    return false;
  }

  /**
   * Whether this process leaves {@code node}'s lock to other schedulers right now ({@link
   * FairReleaseQueue}'s turn or lost-race pause); {@code StoreNodeLock} then answers contention
   * without a request. Cheap, no I/O. Default {@code false}.
   */
  default boolean leavingTurn(String node) {
    return false;
  }

  /**
   * Claims {@code node}'s one slot for a waiter's compare-and-set in this process (issue 25 item
   * 4): a second waiter could only lose, so it gets contention without a request, and a gang
   * released together sends one PATCH per process. Cheap, no I/O.
   *
   * @return the slot, to {@linkplain Attempt#end end} once; empty while another attempt holds it;
   *     by default always {@link Attempt#UNTRACKED}
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
      /** It met a value another process wrote: the next release here pauses a few round trips. */
      HELD_ELSEWHERE,
      /** Neither won nor met a holder (e.g. a backend error): the oldest waiter is woken. */
      UNDECIDED
    }

    /** Frees the slot; later calls do nothing. */
    void end(End how);
  }
}
