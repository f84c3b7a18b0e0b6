package dev.hamilock.core.acquire;

import dev.hamilock.core.LockReleaseSignal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * A scriptable {@link LockReleaseSignal}: its reliability is decided per {@code isReliable} call
 * (by call number), every {@code awaitChange} is recorded with its entry time and timeout, and
 * {@link #fire()} changes the version like a release would.
 */
final class FakeSignal implements LockReleaseSignal {

    /** One {@code awaitChange} call. */
    record Wait(long askedNanos, long timeoutNanos, int attemptsBefore, boolean changed) {
        /** @return the latest instant this wait may end, from a time taken before the acquirer's clock read */
        long endNanos() {
            return askedNanos + timeoutNanos;
        }
    }

    private final IntPredicate reliableOnCall;
    private final List<Wait> waits = new ArrayList<>();
    private long version;
    private int reliableCalls;
    private long lastAskedNanos;
    /** Set by the test: how many lock attempts happened so far (to group waits by attempt). */
    volatile int attempts;
    /** Called (outside the monitor) when a wait starts, with its number; may fire the signal. */
    volatile java.util.function.IntConsumer onWait = n -> { };

    /** Null: waits take real time. Otherwise a wait without a change advances this clock instead. */
    private final SteppedClock clock;

    FakeSignal(IntPredicate reliableOnCall) {
        this(reliableOnCall, null);
    }

    /** A signal whose waits take virtual time on {@code clock} (the acquirer's clock too). */
    FakeSignal(IntPredicate reliableOnCall, SteppedClock clock) {
        this.reliableOnCall = reliableOnCall;
        this.clock = clock;
    }

    /** @return the time on this signal's clock: the stepped clock if any, else {@link System#nanoTime()} */
    long now() {
        return clock != null ? clock.nanoTime() : System.nanoTime();
    }

    @Override
    public synchronized long version(String node) {
        return version;
    }

    @Override
    public boolean awaitChange(String node, long sinceVersion, Duration timeout) throws InterruptedException {
        int n;
        synchronized (this) {
            n = waits.size();
        }
        onWait.accept(n);
        long entered = System.nanoTime();
        long nanos = Math.max(0, timeout.toNanos());
        boolean changed;
        if (clock != null) {
            synchronized (this) {
                changed = version != sinceVersion;
                if (!changed) {
                    clock.advance(nanos);
                }
                waits.add(new Wait(lastAskedNanos, nanos, attempts, changed));
            }
            return changed;
        }
        synchronized (this) {
            long deadline = entered + nanos;
            while (version == sinceVersion) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                wait(left / 1_000_000L, (int) (left % 1_000_000L));
            }
            changed = version != sinceVersion;
            waits.add(new Wait(lastAskedNanos, nanos, attempts, changed));
        }
        return changed;
    }

    @Override
    public synchronized boolean isReliable(String node) {
        lastAskedNanos = now(); // the acquirer reads its clock after asking
        return reliableOnCall.test(reliableCalls++);
    }

    /** A release: bumps the version and wakes every waiter. */
    synchronized void fire() {
        version++;
        notifyAll();
    }

    synchronized List<Wait> waits() {
        return List.copyOf(waits);
    }
}
