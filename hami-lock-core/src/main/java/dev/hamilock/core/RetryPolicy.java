package dev.hamilock.core;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.Duration;
import java.util.Objects;

/**
 * How a gang member waits for a contended node lock: HAMi's {@code acquireNodeLocks} ({@code
 * pkg/scheduler/scheduler.go}, flag {@code --node-lock-retry-timeout}).
 *
 * <p>Attempts repeat after a back-off starting at {@code pollInterval} (default 100 ms, see below;
 * a {@link LockReleaseSignal} may wake a waiter earlier) until {@code retryTimeout} (default 28 s)
 * has passed; the timeout is a hard bound that no wait overruns. A zero retry timeout disables
 * waiting (one attempt, fail fast). The retry timeout must stay below the scheduler extender's
 * {@code httpTimeout} (HAMi's chart writes 30 s), or kube-scheduler abandons the bind while the
 * extender still waits.
 *
 * <p>While the contended lock's signal reports itself reliable ({@link
 * LockReleaseSignal#isReliable(String)}: e.g. the node watch is connected and synced), a waiter
 * instead waits for the signal up to {@code watchedPollInterval} (default 1 s) between attempts — a
 * safety net, since a reliable signal wakes it on release — so a queue of waiters costs no requests
 * while it waits. When the signal is not reliable (watch down, or none), the back-off below applies
 * (HAMi polls every 100 ms).
 *
 * <p><b>Back-off without a reliable signal</b> (HAMi#2589, polling herd): the {@code pollInterval}
 * is only the first step of an exponential back-off — 100 → 200 → 400 → 800 ms, capped at {@code
 * maxPollInterval} (default 1 s) — with full jitter: wait number {@code k} (from 0) of one acquire
 * call lasts a uniformly random time in {@code (0, min(maxPollInterval, pollInterval·2^k)]}, never
 * past the retry deadline, and ends early when the contended lock's signal (if any) fires. A queue
 * of gang members polling without the watch thus spreads out instead of hitting the API server
 * every 100 ms each. {@code maxPollInterval == pollInterval} gives HAMi's fixed poll (no back-off,
 * no jitter). With a reliable signal (the watch on) the back-off does not apply: the watched
 * interval does.
 *
 * @param pollInterval first back-off step when no reliable release signal is available; positive
 * @param retryTimeout total time to keep retrying; zero disables retries
 * @param extenderHttpTimeout the extender HTTP timeout the retry timeout must stay below; positive
 * @param watchedPollInterval longest wait between attempts while the release signal is reliable; at
 *     least {@code pollInterval}
 * @param maxPollInterval cap of the back-off without a reliable signal; at least {@code
 *     pollInterval}
 */
public record RetryPolicy(
    Duration pollInterval,
    Duration retryTimeout,
    Duration extenderHttpTimeout,
    Duration watchedPollInterval,
    Duration maxPollInterval) {

  /** The longest default API request timeout ({@link #requestTimeout()}): 10 s. */
  public static final Duration MAX_REQUEST_TIMEOUT = Duration.ofSeconds(10);

  /** HAMi's poll interval: 100 ms. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(100);

  /** HAMi's {@code --node-lock-retry-timeout} default: 28 s. */
  public static final Duration DEFAULT_RETRY_TIMEOUT = Duration.ofSeconds(28);

  /** The extender {@code httpTimeout} HAMi's chart configures: 30 s. */
  public static final Duration DEFAULT_EXTENDER_HTTP_TIMEOUT = Duration.ofSeconds(30);

  /**
   * Default safety interval between attempts while the release signal is reliable: 1 s (or the poll
   * interval, if that is longer).
   */
  public static final Duration DEFAULT_WATCHED_POLL_INTERVAL = Duration.ofSeconds(1);

  /**
   * Default cap of the back-off without a reliable release signal: 1 s (or the poll interval, if
   * longer).
   */
  public static final Duration DEFAULT_MAX_POLL_INTERVAL = Duration.ofSeconds(1);

  /**
   * Validates the policy.
   *
   * @throws NullPointerException naming the argument if a duration is null
   * @throws IllegalArgumentException naming the argument and value if the poll interval or extender
   *     timeout is not positive, the retry timeout is negative, the retry timeout is not below the
   *     extender HTTP timeout, or the watched poll interval is shorter than the poll interval
   */
  public RetryPolicy {
    checkPositive("pollInterval", pollInterval);
    Objects.requireNonNull(maxPollInterval, "maxPollInterval");
    checkArgument(
        maxPollInterval.compareTo(pollInterval) >= 0,
        "maxPollInterval %s must not be shorter than pollInterval %s",
        GoDuration.format(maxPollInterval),
        GoDuration.format(pollInterval));
    Objects.requireNonNull(watchedPollInterval, "watchedPollInterval");
    checkArgument(
        watchedPollInterval.compareTo(pollInterval) >= 0,
        "watchedPollInterval %s must not be shorter than pollInterval %s",
        GoDuration.format(watchedPollInterval),
        GoDuration.format(pollInterval));
    checkPositive("extenderHttpTimeout", extenderHttpTimeout);
    Objects.requireNonNull(retryTimeout, "retryTimeout");
    checkArgument(
        !retryTimeout.isNegative(),
        "retryTimeout must not be negative: %s",
        GoDuration.format(retryTimeout));
    checkArgument(
        retryTimeout.compareTo(extenderHttpTimeout) < 0,
        "node lock retry timeout %s must be below the scheduler extender HTTP timeout %s"
            + " (otherwise kube-scheduler abandons the bind while the extender still waits)",
        GoDuration.format(retryTimeout),
        GoDuration.format(extenderHttpTimeout));
  }

  /**
   * A policy with the default watched poll interval: {@link #DEFAULT_WATCHED_POLL_INTERVAL} or
   * {@code pollInterval}, whichever is longer (the shape of this record before the watched interval
   * existed).
   *
   * @param pollInterval wait between attempts; positive
   * @param retryTimeout total time to keep retrying; zero disables retries
   * @param extenderHttpTimeout the extender HTTP timeout; positive
   * @throws IllegalArgumentException as the canonical constructor
   */
  public RetryPolicy(Duration pollInterval, Duration retryTimeout, Duration extenderHttpTimeout) {
    this(pollInterval, retryTimeout, extenderHttpTimeout, defaultWatched(pollInterval));
  }

  /**
   * A policy with the default back-off cap: {@link #DEFAULT_MAX_POLL_INTERVAL} or {@code
   * pollInterval}, whichever is longer (the shape of this record before the back-off).
   *
   * @param pollInterval first back-off step; positive
   * @param retryTimeout total time to keep retrying; zero disables retries
   * @param extenderHttpTimeout the extender HTTP timeout; positive
   * @param watchedPollInterval longest wait while the release signal is reliable; at least {@code
   *     pollInterval}
   * @throws IllegalArgumentException as the canonical constructor
   */
  public RetryPolicy(
      Duration pollInterval,
      Duration retryTimeout,
      Duration extenderHttpTimeout,
      Duration watchedPollInterval) {
    this(
        pollInterval,
        retryTimeout,
        extenderHttpTimeout,
        watchedPollInterval,
        defaultMaxPoll(pollInterval));
  }

  private static Duration defaultMaxPoll(Duration pollInterval) {
    return pollInterval != null && pollInterval.compareTo(DEFAULT_MAX_POLL_INTERVAL) > 0
        ? pollInterval
        : DEFAULT_MAX_POLL_INTERVAL;
  }

  /**
   * The upper bound of back-off wait number {@code k} of one acquire call (before jitter): {@code
   * min(maxPollInterval, pollInterval·2^k)}, saturating.
   *
   * @param k the wait's index within one acquire call, from 0
   * @return the bound; {@code pollInterval} for {@code k <= 0}
   */
  public Duration backoffBound(int k) {
    if (k <= 0) {
      return pollInterval;
    }
    long poll = pollInterval.toNanos();
    long max = maxPollInterval.toNanos();
    long bound = k >= 62 || poll > (max >> Math.min(k, 62)) ? max : Math.min(max, poll << k);
    return Duration.ofNanos(bound);
  }

  private static Duration defaultWatched(Duration pollInterval) {
    return pollInterval != null && pollInterval.compareTo(DEFAULT_WATCHED_POLL_INTERVAL) > 0
        ? pollInterval
        : DEFAULT_WATCHED_POLL_INTERVAL;
  }

  /**
   * @return the HAMi defaults: poll 100 ms, retry timeout 28 s, extender timeout 30 s; and 1 s
   *     between attempts while the release signal is reliable
   */
  public static RetryPolicy defaults() {
    return builder().build();
  }

  /**
   * @return a policy with retries disabled (retry timeout 0): one attempt, fail fast
   */
  public static RetryPolicy failFast() {
    return builder().retryTimeout(Duration.ZERO).build();
  }

  /**
   * @return a builder preset with the HAMi defaults
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The longest whole-call timeout of one API request that fits this policy: 10 s ({@link
   * #MAX_REQUEST_TIMEOUT}), or half the extender HTTP timeout if that is shorter, so a request ends
   * before kube-scheduler gives up on the extender call (HAMi's chart: {@code httpTimeout} 30 s).
   * The client modules' default request timeout.
   *
   * @return {@code min(10 s, extenderHttpTimeout / 2)}
   */
  public Duration requestTimeout() {
    Duration half = extenderHttpTimeout.dividedBy(2);
    return half.compareTo(MAX_REQUEST_TIMEOUT) < 0 ? half : MAX_REQUEST_TIMEOUT;
  }

  /**
   * @return {@code true} if the retry timeout is positive
   */
  public boolean retriesEnabled() {
    return !retryTimeout.isZero();
  }

  private static void checkPositive(String argument, Duration d) {
    Objects.requireNonNull(d, argument);
    checkArgument(
        !d.isNegative() && !d.isZero(), "%s must be positive: %s", argument, GoDuration.format(d));
  }

  /** Builder for {@link RetryPolicy}; validation happens in {@link #build()}. Not thread-safe. */
  public static final class Builder {
    private Duration pollInterval = DEFAULT_POLL_INTERVAL;
    private Duration retryTimeout = DEFAULT_RETRY_TIMEOUT;
    private Duration extenderHttpTimeout = DEFAULT_EXTENDER_HTTP_TIMEOUT;
    private Duration watchedPollInterval;
    private Duration maxPollInterval;

    private Builder() {}

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
     * @param goDuration retry timeout in Go duration text, as HAMi's {@code
     *     --node-lock-retry-timeout} flag takes it ({@code 28s}, {@code 0})
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
     * @param watchedPollInterval longest wait between attempts while the contended lock's release
     *     signal is reliable (default: 1 s, or the poll interval if that is longer); at least the
     *     poll interval
     * @return this builder
     */
    public Builder watchedPollInterval(Duration watchedPollInterval) {
      this.watchedPollInterval = watchedPollInterval;
      return this;
    }

    /**
     * @param maxPollInterval cap of the back-off between attempts without a reliable release signal
     *     (default: 1 s, or the poll interval if that is longer); at least the poll interval; equal
     *     to it for HAMi's fixed poll (no back-off, no jitter)
     * @return this builder
     */
    public Builder maxPollInterval(Duration maxPollInterval) {
      this.maxPollInterval = maxPollInterval;
      return this;
    }

    /**
     * @return the validated policy
     * @throws IllegalArgumentException as {@link RetryPolicy#RetryPolicy(Duration, Duration,
     *     Duration, Duration)}
     */
    public RetryPolicy build() {
      Duration watched =
          watchedPollInterval == null ? defaultWatched(pollInterval) : watchedPollInterval;
      Duration maxPoll = maxPollInterval == null ? defaultMaxPoll(pollInterval) : maxPollInterval;
      return new RetryPolicy(pollInterval, retryTimeout, extenderHttpTimeout, watched, maxPoll);
    }
  }
}
