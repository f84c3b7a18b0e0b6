package dev.hamilock.core;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.core.store.StoreNodeLock;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The client-neutral settings of HAMi's node lock, validated once and taken whole by {@link
 * StoreNodeLock}, {@code NodeLockAcquirer} and every client's stack; the setters live once, in
 * {@link Configurer}.
 *
 * @param key lock annotation key (HAMi {@code NodeLockAnnotation}, {@code
 *     pkg/util/nodelock/nodelock.go}); a valid Kubernetes annotation key (apimachinery {@code
 *     validation.IsQualifiedName})
 * @param lockTimeout lock expiry, HAMi's precedence (HAMi#2790): explicit &gt; {@code
 *     HAMI_NODELOCK_EXPIRE} &gt; 5 min; positive
 * @param retryPolicy gang members' lock retries
 * @param clock source of lock timestamps and expiry (default system UTC)
 * @param waitClock monotonic time, sleeps and jitter of the waits (default {@link
 *     WaitClock#SYSTEM})
 * @param listener lock events, e.g. metrics (default {@link NodeLockListener#NOOP})
 * @param ownerLiveness replaces the backend's owner liveness (a pod lookup on Kubernetes; every
 *     owner alive for a bare {@link StoreNodeLock}); empty: the backend's
 * @param livenessCacheTtl how long an ALIVE liveness answer is reused for the same lock value (1 s;
 *     0 asks every time, as HAMi); not negative
 */
public record LockSettings(
    String key,
    Duration lockTimeout,
    RetryPolicy retryPolicy,
    InstantSource clock,
    WaitClock waitClock,
    NodeLockListener listener,
    Optional<OwnerLiveness> ownerLiveness,
    Duration livenessCacheTtl) {

  private static final Pattern QUALIFIED_NAME =
      Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

  private static final Pattern DNS1123_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /**
   * @throws NullPointerException naming a null setting
   * @throws IllegalArgumentException naming the setting and value that breaks a rule above
   */
  public LockSettings {
    requireAnnotationKey(key);
    Objects.requireNonNull(lockTimeout, "lockTimeout");
    checkArgument(
        !lockTimeout.isNegative() && !lockTimeout.isZero(),
        "lockTimeout must be positive: %s",
        lockTimeout);
    Objects.requireNonNull(retryPolicy, "retryPolicy");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(waitClock, "waitClock");
    Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(ownerLiveness, "ownerLiveness");
    Objects.requireNonNull(livenessCacheTtl, "livenessCacheTtl");
    checkArgument(
        !livenessCacheTtl.isNegative(),
        "livenessCacheTtl must not be negative: %s",
        livenessCacheTtl);
  }

  /**
   * The lock timeout: explicit &gt; {@link NodeLock#LOCK_TIMEOUT_ENV} in {@code environment} (Go
   * duration; empty is unset, as in HAMi) &gt; {@link NodeLock#DEFAULT_LOCK_TIMEOUT}.
   *
   * @throws IllegalArgumentException naming the variable and value if the environment value is not
   *     a positive Go duration (HAMi logs and ignores it), or the explicit value is not positive
   */
  public static Duration resolveLockTimeout(
      Optional<Duration> explicit, Map<String, String> environment) {
    String text = environment.get(NodeLock.LOCK_TIMEOUT_ENV);
    if (explicit.isPresent() || text == null || text.isEmpty()) {
      Duration d = explicit.orElse(NodeLock.DEFAULT_LOCK_TIMEOUT);
      checkArgument(
          !d.isNegative() && !d.isZero(), "lockTimeout must be positive: %s", GoDuration.format(d));
      return d;
    }
    Duration d;
    try {
      d = GoDuration.parse(text);
    } catch (InvalidGoDurationException e) {
      throw new IllegalArgumentException(
          String.format(
              "environment variable %s=\"%s\" is not a Go duration (e.g. 300s, 5m, 1h30m): %s",
              NodeLock.LOCK_TIMEOUT_ENV, text, e.getMessage()),
          e);
    }
    checkArgument(
        !d.isNegative() && !d.isZero(),
        "environment variable %s=\"%s\" must be a positive duration",
        NodeLock.LOCK_TIMEOUT_ENV,
        text);
    return d;
  }

  private static void requireAnnotationKey(String key) {
    requireNonBlank(key, "key");
    String lower = key.toLowerCase(Locale.ROOT);
    int slash = lower.indexOf('/');
    String prefix = slash < 0 ? null : lower.substring(0, slash);
    String local = slash < 0 ? lower : lower.substring(slash + 1);
    boolean ok =
        (prefix == null
                || (!prefix.isEmpty()
                    && prefix.length() <= 253
                    && DNS1123_SUBDOMAIN.matcher(prefix).matches()))
            && local.length() <= 63
            && QUALIFIED_NAME.matcher(local).matches();
    checkArgument(
        ok,
        "key \"%s\" is not a valid annotation key: a Kubernetes annotation key is an optional prefix"
            + " (a DNS-1123 subdomain, lower case alphanumerics, '-' and '.', at most 253"
            + " characters) and '/', then a name of at most 63 characters matching"
            + " ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
        key);
  }

  /**
   * HAMi's defaults (the record components' defaults).
   *
   * @throws IllegalArgumentException if {@code HAMI_NODELOCK_EXPIRE} is not a positive Go duration
   */
  public static LockSettings defaults() {
    return builder().build();
  }

  /** A builder preset with the {@link #defaults()}. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder preset with {@code base} (its lock timeout counts as explicit).
   *
   * @throws NullPointerException if {@code base} is null
   */
  public static Builder builder(LockSettings base) {
    return new Builder().lockSettings(base);
  }

  /**
   * These settings for another lock key (a vendor's {@code DeviceVendor.nodeLockKey()}).
   *
   * @throws IllegalArgumentException if {@code otherKey} is blank or not a valid annotation key
   */
  public LockSettings withKey(String otherKey) {
    return builder(this).key(otherKey).build();
  }

  /** Builder of {@link LockSettings}; {@link #build()} validates. Not thread-safe. */
  public static final class Builder extends Configurer<Builder> {
    private Builder() {}

    @Override
    protected Builder self() {
      return this;
    }

    /**
     * @return the validated settings
     * @throws IllegalArgumentException as {@link LockSettings#LockSettings}, and for an invalid
     *     {@code HAMI_NODELOCK_EXPIRE} when no lock timeout is set
     */
    public LockSettings build() {
      return lockSettings();
    }
  }

  /**
   * The setters of {@link LockSettings}, inherited by every builder that takes them; validation
   * happens when the settings are built. Not thread-safe.
   *
   * @param <B> the concrete builder, returned by every setter
   */
  public abstract static class Configurer<B extends Configurer<B>> {
    private String key = NodeLock.DEFAULT_KEY;
    private Duration lockTimeout; // null: not explicit
    private Map<String, String> environment;
    private RetryPolicy retryPolicy = RetryPolicy.defaults();
    private InstantSource clock = Clock.systemUTC();
    private WaitClock waitClock = WaitClock.SYSTEM;
    private NodeLockListener listener = NodeLockListener.NOOP;
    private OwnerLiveness ownerLiveness;
    private Duration livenessCacheTtl = Duration.ofSeconds(1);

    /** Subclasses only. */
    protected Configurer() {}

    /** This builder as its concrete type. */
    protected abstract B self();

    /**
     * Replaces every lock setting by those of {@code base} (its lock timeout becomes explicit).
     *
     * @throws NullPointerException if {@code base} is null
     */
    public B lockSettings(LockSettings base) {
      Objects.requireNonNull(base, "lockSettings");
      key = base.key();
      lockTimeout = base.lockTimeout();
      retryPolicy = base.retryPolicy();
      clock = base.clock();
      waitClock = base.waitClock();
      listener = base.listener();
      ownerLiveness = base.ownerLiveness().orElse(null);
      livenessCacheTtl = base.livenessCacheTtl();
      return self();
    }

    /** Sets {@link LockSettings#key()} (default {@code hami.io/mutex.lock}). */
    public B key(String key) {
      this.key = key;
      return self();
    }

    /** Sets {@link LockSettings#lockTimeout()} explicitly, over {@code HAMI_NODELOCK_EXPIRE}. */
    public B lockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
      return self();
    }

    /** Where {@code HAMI_NODELOCK_EXPIRE} is read without explicit timeout ({@code getenv()}). */
    public B environment(Map<String, String> environment) {
      this.environment = environment;
      return self();
    }

    /** Sets {@link LockSettings#retryPolicy()} (default {@link RetryPolicy#defaults()}). */
    public B retryPolicy(RetryPolicy retryPolicy) {
      this.retryPolicy = retryPolicy;
      return self();
    }

    /** Sets {@link LockSettings#clock()} (default system UTC). */
    public B clock(InstantSource clock) {
      this.clock = clock;
      return self();
    }

    /** Sets {@link LockSettings#waitClock()} (default {@link WaitClock#SYSTEM}). */
    public B waitClock(WaitClock waitClock) {
      this.waitClock = waitClock;
      return self();
    }

    /** Sets {@link LockSettings#listener()} (default none). */
    public B listener(NodeLockListener listener) {
      this.listener = listener;
      return self();
    }

    /** Sets {@link LockSettings#ownerLiveness()} (default: the backend's). */
    public B ownerLiveness(OwnerLiveness ownerLiveness) {
      this.ownerLiveness = ownerLiveness;
      return self();
    }

    /** Sets {@link LockSettings#livenessCacheTtl()} (default 1 s). */
    public B livenessCacheTtl(Duration livenessCacheTtl) {
      this.livenessCacheTtl = livenessCacheTtl;
      return self();
    }

    /**
     * The validated settings, the lock timeout resolved ({@link #resolveLockTimeout}).
     *
     * @throws IllegalArgumentException as {@link Builder#build()}
     */
    protected LockSettings lockSettings() {
      Duration resolved =
          resolveLockTimeout(
              Optional.ofNullable(lockTimeout),
              environment == null ? System.getenv() : environment);
      return new LockSettings(
          key,
          resolved,
          retryPolicy,
          clock,
          waitClock,
          listener,
          Optional.ofNullable(ownerLiveness),
          livenessCacheTtl);
    }
  }
}
