package dev.hamilock.core;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.Duration;
import java.util.Objects;

/**
 * How a gang member waits for a contended node lock: HAMi's {@code acquireNodeLocks} ({@code
 * pkg/scheduler/scheduler.go}, flag {@code --node-lock-retry-timeout}).
 *
 * <p>Attempts repeat until {@code retryTimeout} (default 28 s) has passed, a hard bound no wait
 * overruns; zero disables waiting (one attempt, fail fast). It must stay below the scheduler
 * extender's {@code httpTimeout} (HAMi's chart: 30 s), or kube-scheduler abandons the bind while
 * the extender still waits. Between attempts a waiter waits for the contended lock's release signal
 * up to {@code watchedPollInterval} (default 1 s) while that signal is {@linkplain
 * LockReleaseSignal#isReliable(String) reliable}; otherwise a jittered exponential back-off from
 * {@code pollInterval} (100 ms, HAMi's poll) capped at {@code maxPollInterval} (1 s; HAMi#2589),
 * see {@link #backoffBound}. {@code maxPollInterval == pollInterval} is HAMi's fixed poll, no
 * jitter. The loop is {@code dev.hamilock.core.acquire.NodeLockAcquirer}.
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

  /** Default {@link #watchedPollInterval}: 1 s (or the poll interval, if longer). */
  public static final Duration DEFAULT_WATCHED_POLL_INTERVAL = Duration.ofSeconds(1);

  /** Default {@link #maxPollInterval}: 1 s (or the poll interval, if longer). */
  public static final Duration DEFAULT_MAX_POLL_INTERVAL = Duration.ofSeconds(1);

  /**
   * @throws NullPointerException naming the argument if a duration is null
   * @throws IllegalArgumentException naming the argument and value if the poll interval or extender
   *     timeout is not positive, the retry timeout is negative, the retry timeout is not below the
   *     extender HTTP timeout, or the watched poll interval is shorter than the poll interval
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

  /**
   * @return the HAMi defaults: poll 100 ms, retry timeout 28 s, extender timeout 30 s; and 1 s
   *     between attempts while the release signal is reliable
   */
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
   * The longest whole-call timeout of one API request that fits this policy: 10 s ({@link
   * #MAX_REQUEST_TIMEOUT}), or half the extender HTTP timeout if that is shorter, so a request ends
   * before kube-scheduler gives up on the extender call (HAMi's chart: {@code httpTimeout} 30 s).
   * The client modules' default request timeout.
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

    /**
     * @param pollInterval wait between attempts (default 100 ms); positive
     */
    public Builder pollInterval(Duration pollInterval) {
      this.pollInterval = pollInterval;
      return this;
    }

    /**
     * @param retryTimeout total retry time (default 28 s); zero disables retries
     */
    public Builder retryTimeout(Duration retryTimeout) {
      this.retryTimeout = retryTimeout;
      return this;
    }

    /**
     * @param goDuration retry timeout in Go duration text, as HAMi's {@code
     *     --node-lock-retry-timeout} flag takes it ({@code 28s}, {@code 0})
     * @throws InvalidGoDurationException if the text is not a Go duration
     */
    public Builder retryTimeout(String goDuration) {
      this.retryTimeout = GoDuration.parse(goDuration);
      return this;
    }

    /**
     * @param extenderHttpTimeout the scheduler extender {@code httpTimeout} (default 30 s)
     */
    public Builder extenderHttpTimeout(Duration extenderHttpTimeout) {
      this.extenderHttpTimeout = extenderHttpTimeout;
      return this;
    }

    /**
     * @param watchedPollInterval longest wait between attempts while the contended lock's release
     *     signal is reliable (default: 1 s, or the poll interval if that is longer); at least the
     *     poll interval
     */
    public Builder watchedPollInterval(Duration watchedPollInterval) {
      this.watchedPollInterval = watchedPollInterval;
      return this;
    }

    /**
     * @param maxPollInterval cap of the back-off between attempts without a reliable release signal
     *     (default: 1 s, or the poll interval if that is longer); at least the poll interval; equal
     *     to it for HAMi's fixed poll (no back-off, no jitter)
     */
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
