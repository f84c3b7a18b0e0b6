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
}
