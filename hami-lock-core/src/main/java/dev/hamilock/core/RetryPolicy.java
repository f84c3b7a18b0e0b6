package dev.hamilock.core;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.Duration;
import java.util.Objects;

/**
 * How a gang member waits for a contended node lock: HAMi's {@code acquireNodeLocks} ({@code
 * pkg/scheduler/scheduler.go}, flag {@code --node-lock-retry-timeout}); the loop is {@code
 * NodeLockAcquirer}. The retry timeout must stay below the extender's {@code httpTimeout}, or
 * kube-scheduler abandons the bind while the extender still waits.
 *
 * @param pollInterval first back-off step without a reliable release signal (100 ms); positive
 * @param retryTimeout total time to keep retrying, a hard bound (28 s); zero: one attempt
 * @param extenderHttpTimeout the extender HTTP timeout (HAMi's chart: 30 s); positive
 * @param watchedPollInterval longest wait while the release signal is {@linkplain
 *     LockReleaseSignal#isReliable(String) reliable} (1 s); at least {@code pollInterval}
 * @param maxPollInterval cap of the jittered back-off (1 s, HAMi#2589); at least {@code
 *     pollInterval}; equal to it: HAMi's fixed poll, no jitter
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

  /** Default {@link #watchedPollInterval}: 1 s (or the poll interval, if longer). */
  public static final Duration DEFAULT_WATCHED_POLL_INTERVAL = Duration.ofSeconds(1);

  /** Default {@link #maxPollInterval}: 1 s (or the poll interval, if longer). */
  public static final Duration DEFAULT_MAX_POLL_INTERVAL = Duration.ofSeconds(1);

  /**
   * @throws NullPointerException naming a null duration
   * @throws IllegalArgumentException naming the argument and value that breaks a rule above
   */
  public RetryPolicy {
    checkPositive("pollInterval", pollInterval);
    checkAtLeastPoll("maxPollInterval", maxPollInterval, pollInterval);
    checkAtLeastPoll("watchedPollInterval", watchedPollInterval, pollInterval);
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

  /** {@code fallback}, or {@code pollInterval} if that is longer. */
  private static Duration atLeastPoll(Duration fallback, Duration pollInterval) {
    return pollInterval != null && pollInterval.compareTo(fallback) > 0 ? pollInterval : fallback;
  }

  /** The bound of back-off wait {@code k} (from 0): {@code min(maxPollInterval, poll·2^k)}. */
  public Duration backoffBound(int k) {
    if (k <= 0) {
      return pollInterval;
    }
    long poll = pollInterval.toNanos();
    long max = maxPollInterval.toNanos();
    long bound = k >= 62 || poll > (max >> Math.min(k, 62)) ? max : Math.min(max, poll << k);
    return Duration.ofNanos(bound);
  }

  /** The defaults: poll 100 ms, retry timeout 28 s, extender timeout 30 s, others 1 s. */
  public static RetryPolicy defaults() {
    return builder().build();
  }

  /** A policy with retries disabled (retry timeout 0): one attempt, fail fast. */
  public static RetryPolicy failFast() {
    return builder().retryTimeout(Duration.ZERO).build();
  }

  /** A builder preset with the HAMi defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The client modules' default request timeout: 10 s, or half the extender HTTP timeout if
   * shorter, so a request ends before kube-scheduler gives up on the extender call.
   */
  public Duration requestTimeout() {
    Duration half = extenderHttpTimeout.dividedBy(2);
    return half.compareTo(MAX_REQUEST_TIMEOUT) < 0 ? half : MAX_REQUEST_TIMEOUT;
  }

  /** Whether the retry timeout is positive. */
  public boolean retriesEnabled() {
    return !retryTimeout.isZero();
  }

  private static void checkAtLeastPoll(String argument, Duration d, Duration pollInterval) {
    checkArgument(
        Objects.requireNonNull(d, argument).compareTo(pollInterval) >= 0,
        "%s %s must not be shorter than pollInterval %s",
        argument,
        GoDuration.format(d),
        GoDuration.format(pollInterval));
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

    /** Sets {@link RetryPolicy#pollInterval()} (default 100 ms). */
    public Builder pollInterval(Duration pollInterval) {
      this.pollInterval = pollInterval;
      return this;
    }

    /** Sets {@link RetryPolicy#retryTimeout()} (default 28 s). */
    public Builder retryTimeout(Duration retryTimeout) {
      this.retryTimeout = retryTimeout;
      return this;
    }

    /**
     * The retry timeout as Go duration text, as HAMi's flag takes it ({@code 28s}).
     *
     * @throws InvalidGoDurationException if the text is not a Go duration
     */
    public Builder retryTimeout(String goDuration) {
      this.retryTimeout = GoDuration.parse(goDuration);
      return this;
    }

    /** Sets {@link RetryPolicy#extenderHttpTimeout()} (default 30 s). */
    public Builder extenderHttpTimeout(Duration extenderHttpTimeout) {
      this.extenderHttpTimeout = extenderHttpTimeout;
      return this;
    }

    /** Sets {@link RetryPolicy#watchedPollInterval()} (default 1 s, or the poll if longer). */
    public Builder watchedPollInterval(Duration watchedPollInterval) {
      this.watchedPollInterval = watchedPollInterval;
      return this;
    }

    /** Sets {@link RetryPolicy#maxPollInterval()} (default 1 s, or the poll if longer). */
    public Builder maxPollInterval(Duration maxPollInterval) {
      this.maxPollInterval = maxPollInterval;
      return this;
    }

    /** Validates ({@link RetryPolicy#RetryPolicy}). */
    public RetryPolicy build() {
      Duration watched =
          watchedPollInterval == null
              ? atLeastPoll(DEFAULT_WATCHED_POLL_INTERVAL, pollInterval)
              : watchedPollInterval;
      Duration maxPoll =
          maxPollInterval == null
              ? atLeastPoll(DEFAULT_MAX_POLL_INTERVAL, pollInterval)
              : maxPollInterval;
      return new RetryPolicy(pollInterval, retryTimeout, extenderHttpTimeout, watched, maxPoll);
    }
  }
}
