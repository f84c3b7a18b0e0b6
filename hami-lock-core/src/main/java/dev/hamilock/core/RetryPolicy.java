package dev.hamilock.core;

import java.time.Duration;

/**
 * How a gang member waits for a contended node lock: HAMi's {@code acquireNodeLocks}
 * ({@code pkg/scheduler/scheduler.go}, flag {@code --node-lock-retry-timeout}).
 *
 * <p>Attempts repeat every {@code pollInterval} (default 100 ms, fixed, no back-off; a
 * {@link LockReleaseSignal} may wake a waiter earlier) until {@code retryTimeout} (default 28 s)
 * has passed; the timeout is a hard bound that no wait overruns. A zero retry timeout disables
 * waiting (one attempt, fail fast). The retry timeout must stay below the scheduler extender's
 * {@code httpTimeout} (HAMi's chart writes 30 s), or kube-scheduler abandons the bind while the
 * extender still waits.
 *
 * <p>While the contended lock's signal reports itself reliable
 * ({@link LockReleaseSignal#isReliable(String)}: e.g. the node watch is connected and synced), a
 * waiter instead waits for the signal up to {@code watchedPollInterval} (default 1 s) between
 * attempts — a safety net, since a reliable signal wakes it on release — so a queue of waiters
 * costs no requests while it waits. When the signal is not reliable (watch down, or none), the
 * {@code pollInterval} poll applies, as in HAMi.
 *
 * @param pollInterval        wait between attempts when no reliable release signal is available; positive
 * @param retryTimeout        total time to keep retrying; zero disables retries
 * @param extenderHttpTimeout the extender HTTP timeout the retry timeout must stay below; positive
 * @param watchedPollInterval longest wait between attempts while the release signal is reliable;
 *                            at least {@code pollInterval}
 */
public record RetryPolicy(Duration pollInterval, Duration retryTimeout, Duration extenderHttpTimeout,
        Duration watchedPollInterval) {

    /** HAMi's poll interval: 100 ms. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(100);
    /** HAMi's {@code --node-lock-retry-timeout} default: 28 s. */
    public static final Duration DEFAULT_RETRY_TIMEOUT = Duration.ofSeconds(28);
    /** The extender {@code httpTimeout} HAMi's chart configures: 30 s. */
    public static final Duration DEFAULT_EXTENDER_HTTP_TIMEOUT = Duration.ofSeconds(30);
    /**
     * Default safety interval between attempts while the release signal is reliable: 1 s (or the
     * poll interval, if that is longer).
     */
    public static final Duration DEFAULT_WATCHED_POLL_INTERVAL = Duration.ofSeconds(1);

    /**
     * Validates the policy.
     *
     * @throws IllegalArgumentException naming the argument and value if a duration is null,
     *                                  the poll interval or extender timeout is not positive,
     *                                  the retry timeout is negative, the retry timeout is not
     *                                  below the extender HTTP timeout, or the watched poll
     *                                  interval is null or shorter than the poll interval
     */
    public RetryPolicy {
        requirePositive("pollInterval", pollInterval);
        if (watchedPollInterval == null) {
            throw new IllegalArgumentException("watchedPollInterval must not be null");
        }
        if (watchedPollInterval.compareTo(pollInterval) < 0) {
            throw new IllegalArgumentException("watchedPollInterval " + GoDuration.format(watchedPollInterval)
                    + " must not be shorter than pollInterval " + GoDuration.format(pollInterval));
        }
        requirePositive("extenderHttpTimeout", extenderHttpTimeout);
        if (retryTimeout == null) {
            throw new IllegalArgumentException("retryTimeout must not be null");
        }
        if (retryTimeout.isNegative()) {
            throw new IllegalArgumentException("retryTimeout must not be negative: " + GoDuration.format(retryTimeout));
        }
        if (retryTimeout.compareTo(extenderHttpTimeout) >= 0) {
            throw new IllegalArgumentException("node lock retry timeout " + GoDuration.format(retryTimeout)
                    + " must be below the scheduler extender HTTP timeout " + GoDuration.format(extenderHttpTimeout)
                    + " (otherwise kube-scheduler abandons the bind while the extender still waits)");
        }
    }

    /**
     * A policy with the default watched poll interval: {@link #DEFAULT_WATCHED_POLL_INTERVAL} or
     * {@code pollInterval}, whichever is longer (the shape of this record before the watched
     * interval existed).
     *
     * @param pollInterval        wait between attempts; positive
     * @param retryTimeout        total time to keep retrying; zero disables retries
     * @param extenderHttpTimeout the extender HTTP timeout; positive
     * @throws IllegalArgumentException as the canonical constructor
     */
    public RetryPolicy(Duration pollInterval, Duration retryTimeout, Duration extenderHttpTimeout) {
        this(pollInterval, retryTimeout, extenderHttpTimeout, defaultWatched(pollInterval));
    }

    private static Duration defaultWatched(Duration pollInterval) {
        return pollInterval != null && pollInterval.compareTo(DEFAULT_WATCHED_POLL_INTERVAL) > 0
                ? pollInterval : DEFAULT_WATCHED_POLL_INTERVAL;
    }

    /**
     * @return the HAMi defaults: poll 100 ms, retry timeout 28 s, extender timeout 30 s; and
     *         1 s between attempts while the release signal is reliable
     */
    public static RetryPolicy defaults() {
        return builder().build();
    }

    /** @return a policy with retries disabled (retry timeout 0): one attempt, fail fast */
    public static RetryPolicy failFast() {
        return builder().retryTimeout(Duration.ZERO).build();
    }

    /** @return a builder preset with the HAMi defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return {@code true} if the retry timeout is positive */
    public boolean retriesEnabled() {
        return !retryTimeout.isZero();
    }

    private static void requirePositive(String argument, Duration d) {
        if (d == null) {
            throw new IllegalArgumentException(argument + " must not be null");
        }
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(argument + " must be positive: " + GoDuration.format(d));
        }
    }

    /** Builder for {@link RetryPolicy}; validation happens in {@link #build()}. Not thread-safe. */
    public static final class Builder {
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;
        private Duration retryTimeout = DEFAULT_RETRY_TIMEOUT;
        private Duration extenderHttpTimeout = DEFAULT_EXTENDER_HTTP_TIMEOUT;
        private Duration watchedPollInterval;

        private Builder() {
        }

        /**
         * @param pollInterval wait between attempts (default 100 ms); positive
         * @return this builder
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
            return this;
        }

        /**
         * @param retryTimeout total retry time (default 28 s); zero disables retries
         * @return this builder
         */
        public Builder retryTimeout(Duration retryTimeout) {
            this.retryTimeout = retryTimeout;
            return this;
        }

        /**
         * @param goDuration retry timeout in Go duration text, as HAMi's
         *                   {@code --node-lock-retry-timeout} flag takes it ({@code 28s}, {@code 0})
         * @return this builder
         * @throws InvalidGoDurationException if the text is not a Go duration
         */
        public Builder retryTimeout(String goDuration) {
            this.retryTimeout = GoDuration.parse(goDuration);
            return this;
        }

        /**
         * @param extenderHttpTimeout the scheduler extender {@code httpTimeout} (default 30 s)
         * @return this builder
         */
        public Builder extenderHttpTimeout(Duration extenderHttpTimeout) {
            this.extenderHttpTimeout = extenderHttpTimeout;
            return this;
        }

        /**
         * @param watchedPollInterval longest wait between attempts while the contended lock's
         *                            release signal is reliable (default: 1 s, or the poll
         *                            interval if that is longer); at least the poll interval
         * @return this builder
         */
        public Builder watchedPollInterval(Duration watchedPollInterval) {
            this.watchedPollInterval = watchedPollInterval;
            return this;
        }

        /**
         * @return the validated policy
         * @throws IllegalArgumentException as {@link RetryPolicy#RetryPolicy(Duration, Duration, Duration, Duration)}
         */
        public RetryPolicy build() {
            return watchedPollInterval == null
                    ? new RetryPolicy(pollInterval, retryTimeout, extenderHttpTimeout)
                    : new RetryPolicy(pollInterval, retryTimeout, extenderHttpTimeout, watchedPollInterval);
        }
    }
}
