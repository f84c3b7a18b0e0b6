package dev.hamilock.extender;

import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.core.GoDuration;
import dev.hamilock.core.InvalidGoDurationException;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.device.spi.PolicyValues;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Settings of the scheduler extender, taking HAMi's scheduler flags ({@code cmd/scheduler/main.go},
 * spec §2.1) in Go duration syntax. HAMi's flags (the timeouts and the two policies) are parsed,
 * defaulted and validated by hami-lock-bind's {@link HamiSchedulerFlags} — the same parser a
 * scheduler outside this module uses ({@link #schedulerFlags()}); this class adds the serving
 * flags.
 *
 * <table>
 *   <caption>Flags ({@code --name=value} or {@code --name value})</caption>
 *   <tr><th>flag</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code --node-lock-retry-timeout}</td><td>{@code 28s}</td><td>how long a gang member's
 *       bind waits for a contended node lock; {@code 0} disables waiting (HAMi's flag)</td></tr>
 *   <tr><td>{@code --node-lock-timeout}</td><td>{@code $HAMI_NODELOCK_EXPIRE}, else {@code 5m}</td>
 *       <td>age after which a node lock counts as expired (HAMi's flag). Precedence, one
 *       resolution for the whole lock stack ({@link StoreNodeLock#resolveLockTimeout}):
 *       explicit flag &gt; environment {@code HAMI_NODELOCK_EXPIRE} &gt; 5 min (HAMi#2790)</td></tr>
 *   <tr><td>{@code --extender-http-timeout}</td><td>{@code 30s}</td><td>the {@code httpTimeout}
 *       of this extender in kube-scheduler's {@code KubeSchedulerConfiguration}</td></tr>
 *   <tr><td>{@code --port}</td><td>{@code 8080}</td><td>HTTP port; {@code 0} picks a free one</td></tr>
 *   <tr><td>{@code --bind-address}</td><td>{@code 127.0.0.1}</td><td>listen address (loopback, as
 *       HAMi's scheduler: the documented deployment is a sidecar of kube-scheduler)</td></tr>
 *   <tr><td>{@code --node-scheduler-policy}</td><td>{@code binpack}</td><td>HAMi's node policy:
 *       {@code binpack} or {@code spread}</td></tr>
 *   <tr><td>{@code --gpu-scheduler-policy}</td><td>{@code spread}</td><td>HAMi's device policy: a
 *       comma list of {@code binpack}, {@code spread}, {@code numa}, {@code mutex},
 *       {@code topology-aware}</td></tr>
 * </table>
 *
 * <p>Plus the serving flags of {@link ServingConfig} ({@code --max-connections}, {@code
 * --max-filter-nodes}, {@code --scheduler-name}, {@code --tls-cert-file}, ...).
 *
 * <p><b>Refuse-to-start rule.</b> The retry timeout must be below the extender HTTP timeout:
 * otherwise kube-scheduler abandons the bind call while the extender still waits for the lock and
 * may later bind a pod the scheduler already gave up on. Construction fails with {@link
 * InvalidExtenderConfigException} naming both values (core's {@link RetryPolicy} validation). An
 * unknown policy word ({@code --gpu-scheduler-policy=binpak}) also refuses to start, naming the
 * flag, the value and the accepted words ({@link PolicyValues}; values are trimmed and compared
 * exactly, HAMi#2767).
 *
 * @param port HTTP port, 0..65535 (0 = ephemeral)
 * @param bindAddress listen address, e.g. {@code 0.0.0.0} or {@code 127.0.0.1}
 * @param schedulerFlags HAMi's flags ({@code --node-lock-retry-timeout}, {@code
 *     --node-lock-timeout}, {@code --extender-http-timeout}, the node and GPU policies), parsed and
 *     validated by the one parser a scheduler outside the extender uses; a stack takes them whole
 *     ({@code KubernetesHamiStack.Builder.schedulerFlags})
 * @param serving network bounds, served scheduler names and TLS
 */
public record ExtenderConfig(
    int port, String bindAddress, HamiSchedulerFlags schedulerFlags, ServingConfig serving) {

  /** Default HTTP port. */
  public static final int DEFAULT_PORT = 8080;

  /** Default {@code --bind-address}: loopback. */
  public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";

  private static final List<String> FLAGS = flags();

  private static List<String> flags() {
    List<String> f = new java.util.ArrayList<>(HamiSchedulerFlags.FLAGS);
    f.addAll(List.of("--port", "--bind-address"));
    f.addAll(ServingConfig.FLAGS);
    return List.copyOf(f);
  }

  /**
   * Validates.
   *
   * @throws InvalidExtenderConfigException naming the setting and value: null values or a port
   *     outside 0..65535 (the scheduler flags validate themselves: {@link HamiSchedulerFlags})
   */
  public ExtenderConfig {
    if (port < 0 || port > 65535) {
      throw new InvalidExtenderConfigException("--port must be in 0..65535: " + port);
    }
    if (bindAddress == null || bindAddress.isBlank()) {
      throw new InvalidExtenderConfigException("--bind-address must not be blank");
    }
    if (schedulerFlags == null) {
      throw new InvalidExtenderConfigException("schedulerFlags must not be null");
    }
    if (serving == null) {
      throw new InvalidExtenderConfigException("serving must not be null");
    }
  }

  /**
   * @return the defaults: port 8080, {@code 28s}, {@code $HAMI_NODELOCK_EXPIRE} else {@code 5m},
   *     {@code 30s}, binpack, spread
   */
  public static ExtenderConfig defaults() {
    return builder().build();
  }

  /**
   * @return a builder preset with the defaults
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Parses command-line flags (pflag style: {@code --name=value} or {@code --name value}).
   *
   * @param args the arguments; every one must be a known flag or its value
   * @return the validated configuration (unset flags keep their defaults)
   * @throws InvalidExtenderConfigException on an unknown flag ({@code unknown flag: --x}), a
   *     missing value, a value that is not a Go duration / port, or the refuse-to-start rule
   */
  public static ExtenderConfig parse(String... args) {
    return parse(System.getenv(), args);
  }

  /**
   * As {@link #parse(String...)} with a given environment (where {@code HAMI_NODELOCK_EXPIRE} is
   * read when {@code --node-lock-timeout} is absent).
   *
   * @param environment the process environment, e.g. {@code System.getenv()}
   * @param args the arguments
   * @return the validated configuration
   * @throws InvalidExtenderConfigException as {@link #parse(String...)}, and for an {@code
   *     HAMI_NODELOCK_EXPIRE} that is not a positive Go duration
   */
  public static ExtenderConfig parse(java.util.Map<String, String> environment, String... args) {
    Builder b = builder();
    b.hami.environment(environment);
    try {
      HamiSchedulerFlags.forEachFlag(FLAGS, args, b::set);
    } catch (HamiSchedulerFlags.InvalidSchedulerFlagException e) {
      throw new InvalidExtenderConfigException(e.getMessage(), e);
    }
    return b.build();
  }

  /**
   * @return {@code --extender-http-timeout}: kube-scheduler's {@code httpTimeout} for this
   *     extender, the deadline of each request
   */
  public Duration extenderHttpTimeout() {
    return schedulerFlags.extenderHttpTimeout();
  }

  /**
   * @param v other serving settings
   * @return a copy with them
   */
  public ExtenderConfig withServing(ServingConfig v) {
    return new ExtenderConfig(port, bindAddress, schedulerFlags, v);
  }

  /**
   * @return the flags that reproduce this configuration, in {@code --name=value} form
   */
  public List<String> toArgs() {
    List<String> a = new java.util.ArrayList<>(schedulerFlags.toArgs());
    a.addAll(List.of("--port=" + port, "--bind-address=" + bindAddress));
    a.addAll(serving.toArgs());
    return a;
  }

  /** Builder; {@link #build()} validates. Not thread-safe. */
  public static final class Builder {
    private int port = DEFAULT_PORT;
    private String bindAddress = DEFAULT_BIND_ADDRESS;
    private ServingConfig serving = ServingConfig.defaults();
    private final java.util.Map<String, String> servingFlags = new java.util.LinkedHashMap<>();

    /**
     * HAMi's flags: parsed, defaulted and resolved by the one parser a scheduler outside the
     * extender uses.
     */
    private final HamiSchedulerFlags.Builder hami = HamiSchedulerFlags.builder();

    private HamiSchedulerFlags flags; // null: from the parsed flags

    private Builder() {}

    /**
     * @param v HTTP port (0 = ephemeral)
     * @return this
     */
    public Builder port(int v) {
      this.port = v;
      return this;
    }

    /**
     * @param v listen address
     * @return this
     */
    public Builder bindAddress(String v) {
      this.bindAddress = v;
      return this;
    }

    /**
     * @param v HAMi's scheduler flags, replacing any parsed from the command line (default {@link
     *     HamiSchedulerFlags#defaults()})
     * @return this
     * @throws NullPointerException if {@code v} is null
     */
    public Builder schedulerFlags(HamiSchedulerFlags v) {
      this.flags = Objects.requireNonNull(v, "schedulerFlags");
      return this;
    }

    /**
     * @param v network bounds, scheduler names and TLS (default {@link ServingConfig#defaults()})
     * @return this
     */
    public Builder serving(ServingConfig v) {
      this.serving = Objects.requireNonNull(v, "serving");
      this.servingFlags.clear();
      return this;
    }

    private void set(String flag, String value) {
      if (ServingConfig.FLAGS.contains(flag)) {
        servingFlags.put(flag, value);
        return;
      }
      try {
        if (hami.set(flag, value)) {
          return;
        }
      } catch (HamiSchedulerFlags.InvalidSchedulerFlagException e) {
        throw new InvalidExtenderConfigException(e.getMessage(), e);
      }
      switch (flag) {
        case "--port" -> {
          try {
            port = Integer.parseInt(value);
          } catch (NumberFormatException e) {
            throw new InvalidExtenderConfigException(
                "invalid argument \"" + value + "\" for \"--port\" flag: not an integer", e);
          }
        }
        case "--bind-address" -> bindAddress = value;
        default ->
            throw new InvalidExtenderConfigException(
                "unknown flag: " + flag + " (known: " + String.join(", ", FLAGS) + ")");
      }
    }

    private static Duration duration(String flag, String value) {
      try {
        return GoDuration.parse(value);
      } catch (InvalidGoDurationException e) {
        throw new InvalidExtenderConfigException(
            "invalid argument \"" + value + "\" for \"" + flag + "\" flag: " + e.getMessage(), e);
      }
    }

    /**
     * @return the configuration
     * @throws InvalidExtenderConfigException as {@link ExtenderConfig#ExtenderConfig}
     */
    public ExtenderConfig build() {
      HamiSchedulerFlags f;
      try {
        f = flags != null ? flags : hami.build();
      } catch (HamiSchedulerFlags.InvalidSchedulerFlagException e) {
        throw new InvalidExtenderConfigException(e.getMessage(), e);
      }
      return new ExtenderConfig(port, bindAddress, f, servingFromFlags());
    }

    private ServingConfig servingFromFlags() {
      if (servingFlags.isEmpty()) {
        return serving;
      }
      ServingConfig s = serving;
      java.util.Map<String, String> f = servingFlags;
      return new ServingConfig(
          intFlag(f, "--max-connections", s.maxConnections()),
          f.containsKey("--request-header-timeout")
              ? duration("--request-header-timeout", f.get("--request-header-timeout"))
              : s.requestHeaderTimeout(),
          f.containsKey("--request-body-timeout")
              ? duration("--request-body-timeout", f.get("--request-body-timeout"))
              : s.requestBodyTimeout(),
          longFlag(f, "--max-request-body-bytes", s.maxRequestBodyBytes()),
          longFlag(f, "--max-in-flight-body-bytes", s.maxInFlightBodyBytes()),
          intFlag(f, "--max-filter-nodes", s.maxFilterNodes()),
          intFlag(f, "--work-threads", s.workThreads()),
          f.containsKey("--scheduler-name")
              ? Arrays.stream(f.get("--scheduler-name").split(",", -1)).map(String::trim).toList()
              : s.schedulerNames(),
          pathFlag(f, "--tls-cert-file", s.tlsCertFile()),
          pathFlag(f, "--tls-private-key-file", s.tlsPrivateKeyFile()),
          pathFlag(f, "--client-ca-file", s.clientCaFile()),
          f.containsKey("--health-port")
              ? java.util.OptionalInt.of(intFlag(f, "--health-port", 0))
              : s.healthPort());
    }

    private static int intFlag(java.util.Map<String, String> f, String flag, int dflt) {
      long v = longFlag(f, flag, dflt);
      if (v > Integer.MAX_VALUE || v < Integer.MIN_VALUE) {
        throw new InvalidExtenderConfigException(
            "invalid argument \"" + f.get(flag) + "\" for \"" + flag + "\" flag: out of range");
      }
      return (int) v;
    }

    private static long longFlag(java.util.Map<String, String> f, String flag, long dflt) {
      String v = f.get(flag);
      if (v == null) {
        return dflt;
      }
      try {
        return Long.parseLong(v.trim());
      } catch (NumberFormatException e) {
        throw new InvalidExtenderConfigException(
            "invalid argument \"" + v + "\" for \"" + flag + "\" flag: not an integer", e);
      }
    }

    private static java.util.Optional<java.nio.file.Path> pathFlag(
        java.util.Map<String, String> f, String flag, java.util.Optional<java.nio.file.Path> dflt) {
      String v = f.get(flag);
      if (v == null) {
        return dflt;
      }
      if (v.isBlank()) {
        throw new InvalidExtenderConfigException(flag + " must not be blank");
      }
      try {
        return java.util.Optional.of(java.nio.file.Path.of(v));
      } catch (java.nio.file.InvalidPathException e) {
        throw new InvalidExtenderConfigException(
            "invalid argument for \"" + flag + "\" flag: " + e.getMessage(), e);
      }
    }
  }
}
