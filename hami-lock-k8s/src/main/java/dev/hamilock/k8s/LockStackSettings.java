package dev.hamilock.k8s;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.core.LockSettings;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.k8s.internal.Validation;
import java.time.Duration;
import java.util.Objects;

/**
 * The client-java lock stack's settings: core's {@link LockSettings} plus request timeout, attempts
 * and the node watch; the stacks' builders extend {@link Configurer}.
 *
 * @param lock the client-neutral lock settings; a whole stack replaces its key by each vendor's
 * @param requestTimeout whole-call timeout of every API request; positive and below {@link
 *     RetryPolicy#extenderHttpTimeout()}; default {@link RetryPolicy#requestTimeout()} of the retry
 *     policy (10 s, or half the extender HTTP timeout if shorter)
 * @param maxAttempts attempts of reads and lock operations on transient failures (default 5),
 *     1..100
 * @param watch whether the shared node watch wakes waiting gang members on release (default on);
 *     off, waiters only poll every 100 ms
 */
public record LockStackSettings(
    LockSettings lock, Duration requestTimeout, int maxAttempts, boolean watch) {

  /** Default attempts per operation on transient failures: 5. */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;

  /**
   * @throws NullPointerException naming the setting: null lock settings or request timeout
   * @throws IllegalArgumentException naming the setting and its value: request timeout not positive
   *     or not below the extender HTTP timeout, maxAttempts outside 1..100
   */
  public LockStackSettings {
    Objects.requireNonNull(lock, "lock");
    Validation.positive("requestTimeout", requestTimeout);
    checkArgument(
        requestTimeout.compareTo(lock.retryPolicy().extenderHttpTimeout()) < 0,
        "requestTimeout %s must be below the scheduler extender HTTP timeout %s",
        requestTimeout,
        lock.retryPolicy().extenderHttpTimeout());
    Validation.attempts("maxAttempts", maxAttempts);
  }

  /**
   * HAMi's defaults: {@link LockSettings#defaults()}, request timeout 10 s, 5 attempts, watch on.
   *
   * @throws IllegalArgumentException if {@code HAMI_NODELOCK_EXPIRE} is not a positive Go duration
   */
  public static LockStackSettings defaults() {
    return builder().build();
  }

  /** A builder preset with the {@link #defaults()}. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * These settings for another lock key (a vendor's {@code DeviceVendor.nodeLockKey()}).
   *
   * @throws IllegalArgumentException if {@code otherKey} is blank or not a valid annotation key
   */
  public LockStackSettings withKey(String otherKey) {
    return new LockStackSettings(lock.withKey(otherKey), requestTimeout, maxAttempts, watch);
  }

  /** Builder of {@link LockStackSettings}; {@link #build()} validates. Not thread-safe. */
  public static final class Builder extends Configurer<Builder> {
    private Builder() {}

    @Override
    protected Builder self() {
      return this;
    }

    /**
     * @throws IllegalArgumentException as {@link LockStackSettings#LockStackSettings} and {@link
     *     LockSettings#LockSettings}, and for an invalid {@code HAMI_NODELOCK_EXPIRE} when no lock
     *     timeout is set
     */
    public LockStackSettings build() {
      return settings();
    }
  }

  /**
   * The client-java setters on top of core's {@link LockSettings.Configurer}; validation happens
   * when the settings are built. Not thread-safe.
   *
   * @param <B> the concrete builder, returned by every setter
   */
  public abstract static class Configurer<B extends Configurer<B>>
      extends LockSettings.Configurer<B> {
    private Duration requestTimeout; // null: the retry policy's
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private boolean watch = true;

    /** Subclasses only. */
    protected Configurer() {}

    /**
     * Replaces every setting by those of {@code base} (its lock timeout becomes the explicit one).
     *
     * @throws NullPointerException if {@code base} is null
     */
    public B settings(LockStackSettings base) {
      Objects.requireNonNull(base, "settings");
      requestTimeout = base.requestTimeout();
      maxAttempts = base.maxAttempts();
      watch = base.watch();
      return lockSettings(base.lock());
    }

    /** Sets {@link LockStackSettings#requestTimeout()} (default the retry policy's: 10 s). */
    public B requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return self();
    }

    /** Sets {@link LockStackSettings#maxAttempts()} (default 5). */
    public B maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return self();
    }

    /** Sets {@link LockStackSettings#watch()} (default on). */
    public B watch(boolean enabled) {
      this.watch = enabled;
      return self();
    }

    /**
     * The validated settings, lock timeout and request timeout resolved.
     *
     * @throws IllegalArgumentException as {@link LockStackSettings#LockStackSettings}
     */
    protected LockStackSettings settings() {
      LockSettings lock = lockSettings();
      return new LockStackSettings(
          lock,
          requestTimeout != null ? requestTimeout : lock.retryPolicy().requestTimeout(),
          maxAttempts,
          watch);
    }
  }
}
