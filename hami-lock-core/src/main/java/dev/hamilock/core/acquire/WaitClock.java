package dev.hamilock.core.acquire;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Time, sleeping and jitter of the acquire loop's waits (package-private seam: tests run the loop
 * on virtual time to count requests without wall-clock timing).
 */
interface WaitClock {

    /** @return a monotonic time in nanoseconds ({@link System#nanoTime()} scale) */
    long nanoTime();

    /**
     * Sleeps (a wait without a release signal to wake it).
     *
     * @param nanos how long; positive
     * @throws InterruptedException if interrupted
     */
    void sleepNanos(long nanos) throws InterruptedException;

    /**
     * @param bound exclusive upper bound; positive
     * @return a uniformly random value in {@code [0, bound)}
     */
    long randomBelow(long bound);

    /** The real one: {@link System#nanoTime()}, {@link Thread#sleep(long, int)}, {@link ThreadLocalRandom}. */
    WaitClock SYSTEM = new WaitClock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void sleepNanos(long nanos) throws InterruptedException {
            Thread.sleep(nanos / 1_000_000L, (int) (nanos % 1_000_000L));
        }

        @Override
        public long randomBelow(long bound) {
            return ThreadLocalRandom.current().nextLong(bound);
        }
    };
}
