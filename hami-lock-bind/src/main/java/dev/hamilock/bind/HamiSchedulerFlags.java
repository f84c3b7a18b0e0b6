package dev.hamilock.bind;

import dev.hamilock.core.GoDuration;
import dev.hamilock.core.InvalidGoDurationException;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.PolicyValues;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.PodFitter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * HAMi's scheduler flags for node locking and scheduling policy ({@code cmd/scheduler/main.go},
 * spec §2.1), pflag style ({@code --name=value} or {@code --name value}, Go durations), parsed and
 * validated once. Refused, with an {@link InvalidSchedulerFlagException} naming flag and value: a
 * retry timeout not below the extender HTTP timeout (kube-scheduler would abandon the bind while
 * the lock wait goes on), an unknown policy word ({@link PolicyValues}; trimmed, exact, HAMi#2767).
 *
 * @param nodeLockRetryTimeout {@code --node-lock-retry-timeout}: how long a gang member's bind
 *     waits for a contended node lock (default {@code 28s}); zero disables; not negative
 * @param nodeLockTimeout {@code --node-lock-timeout}: age after which a lock is expired; positive.
 *     Explicit flag &gt; environment {@code HAMI_NODELOCK_EXPIRE} &gt; 5 min ({@link
 *     LockSettings#resolveLockTimeout}, HAMi#2790)
 * @param extenderHttpTimeout {@code --extender-http-timeout}: kube-scheduler's {@code httpTimeout}
 *     for the extender (default {@code 30s}); positive
 * @param nodeSchedulerPolicy {@code --node-scheduler-policy}: {@code binpack} (default) or {@code
 *     spread}
 * @param gpuSchedulerPolicy {@code --gpu-scheduler-policy}: a comma list of {@code binpack}, {@code
 *     spread} (default), {@code numa}, {@code mutex}, {@code topology-aware}
 */
public record HamiSchedulerFlags(
    Duration nodeLockRetryTimeout,
    Duration nodeLockTimeout,
    Duration extenderHttpTimeout,
    String nodeSchedulerPolicy,
    String gpuSchedulerPolicy) {

  /** The flags this class parses, in documentation order. */
  public static final List<String> FLAGS =
      List.of(
          "--node-lock-retry-timeout",
          "--node-lock-timeout",
          "--extender-http-timeout",
          "--node-scheduler-policy",
          "--gpu-scheduler-policy");

  /**
   * @throws InvalidSchedulerFlagException naming the flag and value: a null value, a negative retry
   *     timeout, a non-positive lock or HTTP timeout, an unknown policy word, or a retry timeout
   *     not below the HTTP timeout
   */
  public HamiSchedulerFlags {
    requireDuration("--node-lock-retry-timeout", nodeLockRetryTimeout, true);
    requireDuration("--extender-http-timeout", extenderHttpTimeout, false);
    requireDuration("--node-lock-timeout", nodeLockTimeout, false);
    try {
      nodeSchedulerPolicy =
          PolicyValues.requireNodePolicy("--node-scheduler-policy", nodeSchedulerPolicy);
      gpuSchedulerPolicy =
          PolicyValues.requireGpuPolicy("--gpu-scheduler-policy", gpuSchedulerPolicy);
    } catch (PolicyValues.InvalidPolicyValueException e) {
      throw new InvalidSchedulerFlagException("refusing to start: " + e.getMessage(), e);
    }
    if (nodeLockRetryTimeout.compareTo(extenderHttpTimeout) >= 0) {
      throw new InvalidSchedulerFlagException(
          ("refusing to start: --node-lock-retry-timeout=%s must be below --extender-http-timeout=%s"
                  + " (otherwise kube-scheduler abandons the bind while the extender still waits)")
              .formatted(
                  GoDuration.format(nodeLockRetryTimeout), GoDuration.format(extenderHttpTimeout)));
    }
    try {
      retryPolicy(nodeLockRetryTimeout, extenderHttpTimeout);
    } catch (IllegalArgumentException e) {
      throw new InvalidSchedulerFlagException("refusing to start: " + e.getMessage(), e);
    }
  }

  private static void requireDuration(String flag, Duration d, boolean zeroAllowed) {
    if (d == null) {
      throw new InvalidSchedulerFlagException(flag + " must not be null");
    } else if (d.isNegative() || (d.isZero() && !zeroAllowed)) {
      throw new InvalidSchedulerFlagException(
          flag
              + (zeroAllowed ? " must not be negative: " : " must be positive: ")
              + GoDuration.format(d));
    }
  }

  private static RetryPolicy retryPolicy(Duration retry, Duration http) {
    return RetryPolicy.builder().retryTimeout(retry).extenderHttpTimeout(http).build();
  }

  /**
   * @return the defaults: {@code 28s}, {@code $HAMI_NODELOCK_EXPIRE} else {@code 5m}, {@code 30s},
   *     binpack, spread
   * @throws InvalidSchedulerFlagException if {@code HAMI_NODELOCK_EXPIRE} is set but invalid
   */
  public static HamiSchedulerFlags defaults() {
    return builder().build();
  }

  /** {@return a builder preset with the defaults, reading {@code System.getenv()}} */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Parses {@link #FLAGS} (unset ones keep their defaults) with {@code System.getenv()}.
   *
   * @throws InvalidSchedulerFlagException on an unknown flag ({@code unknown flag: --x}), a missing
   *     value, a value that is not a Go duration, or any refusal of the constructor
   */
  public static HamiSchedulerFlags parse(String... args) {
    return parse(System.getenv(), args);
  }

  /**
   * As {@link #parse(String...)} with {@code environment} for {@code HAMI_NODELOCK_EXPIRE}.
   *
   * @throws InvalidSchedulerFlagException as {@link #parse(String...)}, and for an {@code
   *     HAMI_NODELOCK_EXPIRE} that is not a positive Go duration
   */
  public static HamiSchedulerFlags parse(Map<String, String> environment, String... args) {
    Builder b = builder().environment(environment);
    forEachFlag(FLAGS, args, b::set);
    return b.build();
  }

  /**
   * The pflag-style tokenizer of every flag parser here (also the extender's larger flag set).
   *
   * @throws InvalidSchedulerFlagException on an unknown flag ({@code unknown flag: --x (known: …)})
   *     or a flag without a value
   * @throws NullPointerException if {@code args} or one of them is null
   */
  public static void forEachFlag(
      List<String> known, String[] args, java.util.function.BiConsumer<String, String> set) {
    Objects.requireNonNull(args, "args");
    for (int i = 0; i < args.length; i++) {
      String a = Objects.requireNonNull(args[i], "args[" + i + "]");
      int eq = a.indexOf('=');
      String name = eq > 0 ? a.substring(0, eq) : a;
      if (!known.contains(name)) {
        throw new InvalidSchedulerFlagException(
            "unknown flag: " + name + " (known: " + String.join(", ", known) + ")");
      }
      if (eq <= 0 && i + 1 >= args.length) {
        throw new InvalidSchedulerFlagException("flag needs an argument: " + name);
      }
      set.accept(name, eq > 0 ? a.substring(eq + 1) : args[++i]);
    }
  }

  /**
   * @return the gang lock retry policy: HAMi's 100 ms poll, {@link #nodeLockRetryTimeout()},
   *     bounded by {@link #extenderHttpTimeout()}
   */
  public RetryPolicy retryPolicy() {
    return retryPolicy(nodeLockRetryTimeout, extenderHttpTimeout);
  }

  /** {@return {@link #retryPolicy()} and {@link #nodeLockTimeout()}, other settings default} */
  public LockSettings lockSettings() {
    return LockSettings.builder().retryPolicy(retryPolicy()).lockTimeout(nodeLockTimeout).build();
  }

  /**
   * @return a fitter with these node and GPU policies as defaults ({@code pkg/scheduler/policy})
   * @throws NullPointerException if {@code registry} is null
   */
  public PodFitter podFitter(VendorRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    return PodFitter.create(registry, gpuSchedulerPolicy, nodeSchedulerPolicy);
  }

  /** {@return the flags that reproduce these values, in {@code --name=value} form} */
  public List<String> toArgs() {
    return List.of(
        "--node-lock-retry-timeout=" + GoDuration.format(nodeLockRetryTimeout),
        "--node-lock-timeout=" + GoDuration.format(nodeLockTimeout),
        "--extender-http-timeout=" + GoDuration.format(extenderHttpTimeout),
        "--node-scheduler-policy=" + nodeSchedulerPolicy,
        "--gpu-scheduler-policy=" + gpuSchedulerPolicy);
  }

  /** Builder, preset with the defaults; a larger flag parser hands HAMi's to {@link #set}. */
  public static final class Builder {
    private Duration retry = RetryPolicy.DEFAULT_RETRY_TIMEOUT;
    private Duration lockTimeout; // null: not given explicitly
    private Map<String, String> environment = System.getenv();
    private Duration httpTimeout = RetryPolicy.DEFAULT_EXTENDER_HTTP_TIMEOUT;
    private String nodePolicy = "binpack";
    private String gpuPolicy = "spread";

    private Builder() {}

    /**
     * Where {@code HAMI_NODELOCK_EXPIRE} is read (default {@code System.getenv()}).
     *
     * @throws NullPointerException if {@code env} is null
     */
    public Builder environment(Map<String, String> env) {
      this.environment = Objects.requireNonNull(env, "environment");
      return this;
    }

    /**
     * @return whether {@code flag} is one of {@link #FLAGS} (false: nothing set)
     * @throws InvalidSchedulerFlagException if the value of a duration flag is not a Go duration
     */
    public boolean set(String flag, String value) {
      switch (flag) {
        case "--node-lock-retry-timeout" -> retry = duration(flag, value);
        case "--node-lock-timeout" -> lockTimeout = duration(flag, value);
        case "--extender-http-timeout" -> httpTimeout = duration(flag, value);
        case "--node-scheduler-policy" -> nodePolicy = value;
        case "--gpu-scheduler-policy" -> gpuPolicy = value;
        default -> {
          return false;
        }
      }
      return true;
    }

    private static Duration duration(String flag, String value) {
      try {
        return GoDuration.parse(value);
      } catch (InvalidGoDurationException e) {
        throw new InvalidSchedulerFlagException(
            "invalid argument \"" + value + "\" for \"" + flag + "\" flag: " + e.getMessage(), e);
      }
    }

    /**
     * @return the validated flags, the lock timeout resolved: explicit &gt; {@code
     *     HAMI_NODELOCK_EXPIRE} &gt; 5 min
     * @throws InvalidSchedulerFlagException as {@link HamiSchedulerFlags#HamiSchedulerFlags}, and
     *     for an invalid {@code HAMI_NODELOCK_EXPIRE} when no explicit lock timeout is set
     */
    public HamiSchedulerFlags build() {
      Duration expiry = lockTimeout;
      if (expiry == null || !(expiry.isNegative() || expiry.isZero())) {
        try {
          expiry = LockSettings.resolveLockTimeout(Optional.ofNullable(lockTimeout), environment);
        } catch (IllegalArgumentException e) {
          throw new InvalidSchedulerFlagException(
              "refusing to start: --node-lock-timeout not given and " + e.getMessage(), e);
        }
      }
      return new HamiSchedulerFlags(retry, expiry, httpTimeout, nodePolicy, gpuPolicy);
    }
  }

  /** A refused HAMi scheduler flag; the message names the flag and the value. */
  public static final class InvalidSchedulerFlagException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public InvalidSchedulerFlagException(String message) {
      super(message);
    }

    public InvalidSchedulerFlagException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
