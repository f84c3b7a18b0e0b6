package dev.hamilock.core;

import java.time.Duration;

/**
 * Port: wakes waiters when the lock on a node changes (typically: is released), so that a gang
 * member hands off in one round trip instead of up to one poll interval (100 ms). Polling stays
 * the fallback, so a signal may be late or miss events without breaking correctness; it must
 * not fire continuously for unrelated changes (a Kubernetes implementation fires only when the
 * watched node's lock annotation value changes or disappears).
 *
 * <p>Usage without lost wake-ups: take {@link #version(String)} <em>before</em> the attempt that
 * may fail, then {@link #awaitChange(String, long, Duration)} with that version: a change that
 * happened in between returns at once. {@link LockChangeNotifier} is a ready implementation.
 *
 * <p><b>Reliable mode.</b> A signal that can currently <em>guarantee</em> to fire for every
 * release of a node's lock (a node watch that is connected and synced: a resumed watch replays
 * the events it missed, and a relist signals the differences it finds) says so through
 * {@link #isReliable(String)}. While it does, {@code NodeLockAcquirer} waits for it up to
 * {@link RetryPolicy#watchedPollInterval()} (default 1 s) — a safety net only — instead of
 * re-polling every {@link RetryPolicy#pollInterval()} (100 ms), which is what keeps a long queue
 * of waiters from costing a PATCH and a GET per waiter per 100 ms. The answer may change at any
 * moment; the acquirer re-asks at least once per poll interval, so a signal that stops being
 * reliable costs a waiter at most one poll interval of extra delay. Correctness never depends on
 * the answer: every wait is bounded, every attempt is a compare-and-set.
 */
public interface LockReleaseSignal {

    /**
     * @param node the node name
     * @return an opaque version that differs from every earlier one once the node's lock
     *         changed
     */
    long version(String node);

    /**
     * Waits until the node's lock version differs from {@code sinceVersion}, or the timeout
     * passes.
     *
     * @param node         the node name
     * @param sinceVersion a value returned by {@link #version(String)}
     * @param timeout      the longest wait; zero or negative does not wait
     * @return {@code true} if a change was seen, {@code false} on timeout
     * @throws InterruptedException if the waiting thread is interrupted
     */
    boolean awaitChange(String node, long sinceVersion, Duration timeout) throws InterruptedException;

    /**
     * Whether this signal is, right now, guaranteed to report every release of {@code node}'s
     * lock through {@link #awaitChange} (no missed events possible), so that waiters may stop
     * fast polling. Must be cheap (no I/O): it is asked once per poll interval per waiter.
     *
     * @param node the node name
     * @return {@code true} only while no release can be missed; the default, {@code false},
     *         keeps waiters on the {@link RetryPolicy#pollInterval()} poll
     */
    default boolean isReliable(String node) {
        return false;
    }
}
