package dev.hamilock.k8s;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.k8s.internal.Validation;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.k8s.lock.PodOwnerLiveness;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The one settings value of the Kubernetes lock stack, validated once and taken as a whole by every
 * builder that needs it ({@link KubernetesLockStack#builder(io.kubernetes.client.openapi.ApiClient,
 * LockStackSettings)}, and the whole-stack {@code KubernetesHamiStack.builder(apiClient, settings)}
 * in hami-lock-k8s-bind), as Failsafe's {@code RetryPolicyConfig} is taken by {@code
 * RetryPolicy.builder(config)}. No layer re-declares a setting: the setters live once, in {@link
 * Configurer}, which the settings' own {@link Builder} and the stacks' builders extend.
 *
 * @param key lock annotation key on Node objects (HAMi {@code hami.io/mutex.lock}); a valid
 *     Kubernetes annotation key (optional DNS-1123 subdomain prefix and {@code /}, name of at most
 *     63 characters; apimachinery {@code IsQualifiedName}). The whole stack replaces it by each
 *     vendor's key ({@link #withKey})
 * @param lockTimeout lock expiry, already resolved with HAMi's precedence (HAMi#2790): explicit
 *     {@code --node-lock-timeout} ({@link Configurer#lockTimeout}) &gt; environment {@code
 *     HAMI_NODELOCK_EXPIRE} (Go duration, {@link Configurer#environment}) &gt; 5 min; positive
 * @param retryPolicy gang members' lock retries (HAMi {@code --node-lock-retry-timeout}: poll 100
 *     ms, retry timeout 28 s, below the extender HTTP timeout 30 s)
 * @param requestTimeout whole-call timeout of every API request (default 10 s); positive and below
 *     {@link RetryPolicy#extenderHttpTimeout()}
 * @param maxAttempts attempts of reads and lock operations on transient failures (default 5),
 *     1..100
 * @param watch whether the shared node watch wakes waiting gang members on release (default on);
 *     off, waiters only poll every 100 ms
 * @param clock source of lock timestamps and expiry (default system UTC)
 * @param listener lock events (acquired, contended, released, taken over, waited), e.g. metrics;
 *     default {@link NodeLockListener#NOOP}. Wrap one that may throw in {@link
 *     NodeLockListener#guarded}
 * @param ownerLiveness replaces the default {@link PodOwnerLiveness} over the stack's client (e.g.
 *     {@link OwnerLiveness#assumeAlive()} to disable dangling takeover); empty = default
 * @param livenessCacheTtl how long an ALIVE answer is reused for the same exact lock value (default
 *     1 s; 0 asks on every contended attempt, as HAMi does); not negative
 */
public record LockStackSettings(
    String key,
    Duration lockTimeout,
    RetryPolicy retryPolicy,
    Duration requestTimeout,
    int maxAttempts,
    boolean watch,
    InstantSource clock,
    NodeLockListener listener,
    Optional<OwnerLiveness> ownerLiveness,
    Duration livenessCacheTtl) {

  /** Default whole-call request timeout: 10 s. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT =
      NodeAnnotationLockStore.DEFAULT_REQUEST_TIMEOUT;

  /** Default attempts per operation on transient failures: 5. */
  public static final int DEFAULT_MAX_ATTEMPTS = NodeAnnotationLockStore.DEFAULT_MAX_ATTEMPTS;

  /**
   * Validates.
   *
   * @throws NullPointerException naming the setting: null key, lock timeout, retry policy, request
   *     timeout, clock, listener, owner liveness or liveness cache TTL
   * @throws IllegalArgumentException naming the setting and its value: blank key, a key Kubernetes
   *     refuses as an annotation key (optional DNS-1123 subdomain prefix of at most 253 characters
   *     and {@code /}, then a name of at most 63 characters matching {@code
   *     ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]}; apimachinery {@code IsQualifiedName}, checked
   *     here instead of at the first PATCH), non-positive lock timeout, request timeout not
   *     positive or not below the extender HTTP timeout, maxAttempts outside 1..100, negative
   *     liveness cache TTL
   */
  public LockStackSettings {
    requireNonBlank(key, "key");
    Validation.annotationKey("key", key);
    Validation.positive("lockTimeout", lockTimeout);
    Objects.requireNonNull(retryPolicy, "retryPolicy");
    Validation.positive("requestTimeout", requestTimeout);
    checkArgument(
        requestTimeout.compareTo(retryPolicy.extenderHttpTimeout()) < 0,
        "requestTimeout %s must be below the scheduler extender HTTP timeout %s",
        requestTimeout,
        retryPolicy.extenderHttpTimeout());
    Validation.attempts("maxAttempts", maxAttempts);
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(ownerLiveness, "ownerLiveness");
    Validation.notNegative("livenessCacheTtl", livenessCacheTtl);
  }

  /**
   * @return HAMi's defaults: key {@code hami.io/mutex.lock}, lock timeout from {@code
   *     HAMI_NODELOCK_EXPIRE} else 5 min, {@link RetryPolicy#defaults()}, request timeout 10 s, 5
   *     attempts, watch on, system UTC clock, no listener, pod owner liveness, liveness cache 1 s
   * @throws IllegalArgumentException if {@code HAMI_NODELOCK_EXPIRE} is set but not a positive Go
   *     duration
   */
  public static LockStackSettings defaults() {
    return builder().build();
  }

  /**
   * @return a builder preset with the defaults (see {@link #defaults()})
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * @param base settings to start from (Failsafe's {@code builder(config)})
   * @return a builder preset with {@code base}; its lock timeout counts as explicit
   * @throws NullPointerException if {@code base} is null
   */
  public static Builder builder(LockStackSettings base) {
    return new Builder().settings(base);
  }

  /**
   * @param otherKey another lock key (a vendor's {@code DeviceVendor.nodeLockKey()})
   * @return these settings for {@code otherKey}
   * @throws IllegalArgumentException if {@code otherKey} is blank or not a valid Kubernetes
   *     annotation key
   */
  public LockStackSettings withKey(String otherKey) {
    return new LockStackSettings(
        otherKey,
        lockTimeout,
        retryPolicy,
        requestTimeout,
        maxAttempts,
        watch,
        clock,
        listener,
        ownerLiveness,
        livenessCacheTtl);
  }

  /** Builder of {@link LockStackSettings}; {@link #build()} validates. Not thread-safe. */
  public static final class Builder extends Configurer<Builder> {
    private Builder() {}

    @Override
    protected Builder self() {
      return this;
    }

    /**
     * @return the validated settings
     * @throws IllegalArgumentException as {@link LockStackSettings#LockStackSettings}, and for an
     *     invalid {@code HAMI_NODELOCK_EXPIRE} when no lock timeout is set
     */
    public LockStackSettings build() {
      return settings();
    }
  }

  /**
   * The setters of the lock stack's settings, declared once and inherited by every builder that
   * takes them ({@link Builder}, {@link KubernetesLockStack.Builder}, the whole stack's builder),
   * as Failsafe's policy builders share theirs. Setters only record; validation happens when the
   * settings are built. Not thread-safe.
   *
   * @param <B> the concrete builder, returned by every setter
   */
  public abstract static class Configurer<B extends Configurer<B>> {
    private String key = NodeLock.DEFAULT_KEY;
    private Duration lockTimeout; // null: not explicit
    private Map<String, String> environment;
    private RetryPolicy retryPolicy = RetryPolicy.defaults();
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private boolean watch = true;
    private InstantSource clock = Clock.systemUTC();
    private NodeLockListener listener = NodeLockListener.NOOP;
    private OwnerLiveness ownerLiveness;
    private Duration livenessCacheTtl = StoreNodeLock.DEFAULT_LIVENESS_CACHE_TTL;

    /** Subclasses only. */
    protected Configurer() {}

    /**
     * @return this builder as its concrete type
     */
    protected abstract B self();

    /**
     * Replaces every setting by those of {@code base}.
     *
     * @param base the settings (its lock timeout becomes the explicit one)
     * @return this builder
     * @throws NullPointerException if {@code base} is null
     */
    public B settings(LockStackSettings base) {
      Objects.requireNonNull(base, "settings");
      key = base.key();
      lockTimeout = base.lockTimeout();
      retryPolicy = base.retryPolicy();
      requestTimeout = base.requestTimeout();
      maxAttempts = base.maxAttempts();
      watch = base.watch();
      clock = base.clock();
      listener = base.listener();
      ownerLiveness = base.ownerLiveness().orElse(null);
      livenessCacheTtl = base.livenessCacheTtl();
      return self();
    }

    /**
     * @param key lock annotation key (default {@code hami.io/mutex.lock}); a valid Kubernetes
     *     annotation key, checked when the settings are built
     * @return this builder
     */
    public B key(String key) {
      this.key = key;
      return self();
    }

    /**
     * @param lockTimeout explicit lock expiry (HAMi {@code --node-lock-timeout}), overriding {@code
     *     HAMI_NODELOCK_EXPIRE}; positive
     * @return this builder
     */
    public B lockTimeout(Duration lockTimeout) {
      this.lockTimeout = lockTimeout;
      return self();
    }

    /**
     * @param environment where {@code HAMI_NODELOCK_EXPIRE} is read when no explicit lock timeout
     *     is set (default {@code System.getenv()})
     * @return this builder
     */
    public B environment(Map<String, String> environment) {
      this.environment = environment;
      return self();
    }

    /**
     * @param retryPolicy gang retry policy (default {@link RetryPolicy#defaults()}: poll 100 ms,
     *     retry timeout 28 s, extender HTTP timeout 30 s; a zero retry timeout disables waiting)
     * @return this builder
     */
    public B retryPolicy(RetryPolicy retryPolicy) {
      this.retryPolicy = retryPolicy;
      return self();
    }

    /**
     * @param requestTimeout whole-call timeout of every request (default 10 s); positive and below
     *     the retry policy's extender HTTP timeout
     * @return this builder
     */
    public B requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return self();
    }

    /**
     * @param maxAttempts attempts per operation on transient failures (default 5), 1..100
     * @return this builder
     */
    public B maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return self();
    }

    /**
     * @param enabled whether to run the shared node watch that wakes waiters on release (default
     *     {@code true}); without it waiters only poll
     * @return this builder
     */
    public B watch(boolean enabled) {
      this.watch = enabled;
      return self();
    }

    /**
     * @param clock time source for lock timestamps and expiry (default system UTC)
     * @return this builder
     */
    public B clock(InstantSource clock) {
      this.clock = clock;
      return self();
    }

    /**
     * @param listener lock event listener, e.g. metrics (default none)
     * @return this builder
     */
    public B listener(NodeLockListener listener) {
      this.listener = listener;
      return self();
    }

    /**
     * @param ownerLiveness replaces the default {@link PodOwnerLiveness} (e.g. {@link
     *     OwnerLiveness#assumeAlive()} to disable dangling takeover)
     * @return this builder
     */
    public B ownerLiveness(OwnerLiveness ownerLiveness) {
      this.ownerLiveness = ownerLiveness;
      return self();
    }

    /**
     * @param livenessCacheTtl how long an ALIVE answer of the owner-liveness check is reused for
     *     the same exact lock value (default 1 s; {@code 0} asks on every contended attempt, as
     *     HAMi does). Not negative. See {@link StoreNodeLock.Builder#livenessCacheTtl(Duration)}.
     * @return this builder
     */
    public B livenessCacheTtl(Duration livenessCacheTtl) {
      this.livenessCacheTtl = livenessCacheTtl;
      return self();
    }

    /**
     * Resolves the lock timeout (explicit &gt; {@code HAMI_NODELOCK_EXPIRE} &gt; 5 min) and builds
     * the validated settings.
     *
     * @return the settings
     * @throws IllegalArgumentException as {@link LockStackSettings#LockStackSettings}, and for an
     *     invalid {@code HAMI_NODELOCK_EXPIRE}
     */
    protected LockStackSettings settings() {
      if (lockTimeout != null) {
        Validation.positive("lockTimeout", lockTimeout);
      }
      Duration resolved =
          StoreNodeLock.resolveLockTimeout(
              Optional.ofNullable(lockTimeout),
              environment == null ? System.getenv() : environment);
      return new LockStackSettings(
          key,
          resolved,
          retryPolicy,
          requestTimeout,
          maxAttempts,
          watch,
          clock,
          listener,
          Optional.ofNullable(ownerLiveness),
          livenessCacheTtl);
    }
  }
}
