package dev.hamilock.extender;

import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.core.GoDuration;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * Settings of the scheduler extender: HAMi's scheduler flags ({@link HamiSchedulerFlags}, {@code
 * cmd/scheduler/main.go}), those of {@link ServingConfig}, {@code --port} and {@code
 * --bind-address}. Every refusal is an {@link InvalidExtenderConfigException} naming the flag and
 * the value.
 *
 * @param port HTTP port, 0..65535 (0 = ephemeral; default 8080)
 * @param bindAddress listen address, e.g. {@code 0.0.0.0}; default {@code 127.0.0.1} (loopback, as
 *     HAMi's scheduler)
 * @param schedulerFlags HAMi's flags
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
    List<String> f = new ArrayList<>(HamiSchedulerFlags.FLAGS);
    f.addAll(List.of("--port", "--bind-address"));
    f.addAll(ServingConfig.FLAGS);
    return List.copyOf(f);
  }

  /**
   * @throws InvalidExtenderConfigException naming the setting and value: null values or a port
   *     outside 0..65535
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

  /** A builder preset with the defaults: port 8080 on loopback, HAMi's flags' and serving's. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Parses pflag-style flags ({@code --name=value} or {@code --name value}) with {@code
   * HAMI_NODELOCK_EXPIRE} from {@code System.getenv()}; unset flags keep their defaults.
   *
   * @throws InvalidExtenderConfigException on an unknown flag ({@code unknown flag: --x}), a
   *     missing or malformed value, or a refusal of the flags
   */
  public static ExtenderConfig parse(String... args) {
    return parse(System.getenv(), args);
  }

  /**
   * As {@link #parse(String...)}, reading {@code HAMI_NODELOCK_EXPIRE} from {@code environment}.
   *
   * @throws InvalidExtenderConfigException also for an {@code HAMI_NODELOCK_EXPIRE} that is not a
   *     positive Go duration
   */
  public static ExtenderConfig parse(Map<String, String> environment, String... args) {
    Builder b = builder();
    b.hami.environment(environment);
    try {
      HamiSchedulerFlags.forEachFlag(FLAGS, args, b::set);
    } catch (HamiSchedulerFlags.InvalidSchedulerFlagException e) {
      throw new InvalidExtenderConfigException(e.getMessage(), e);
    }
    return b.build();
  }

  /** The flags that reproduce this configuration, in {@code --name=value} form. */
  public List<String> toArgs() {
    List<String> a = new ArrayList<>(schedulerFlags.toArgs());
    a.addAll(List.of("--port=" + port, "--bind-address=" + bindAddress));
    a.addAll(serving.toArgs());
    return a;
  }

  /** Not thread-safe. */
  public static final class Builder {
    private int port = DEFAULT_PORT;
    private String bindAddress = DEFAULT_BIND_ADDRESS;
    private ServingConfig serving = ServingConfig.defaults();
    private final Map<String, String> servingFlags = new LinkedHashMap<>();
    private final HamiSchedulerFlags.Builder hami = HamiSchedulerFlags.builder();
    private HamiSchedulerFlags flags; // null: from the parsed flags

    private Builder() {}

    public Builder port(int v) {
      this.port = v;
      return this;
    }

    public Builder bindAddress(String v) {
      this.bindAddress = v;
      return this;
    }

    /** HAMi's scheduler flags, replacing any parsed. */
    public Builder schedulerFlags(HamiSchedulerFlags v) {
      this.flags = Objects.requireNonNull(v, "schedulerFlags");
      return this;
    }

    /** Network bounds, scheduler names and TLS (default {@link ServingConfig#defaults()}). */
    public Builder serving(ServingConfig v) {
      this.serving = Objects.requireNonNull(v, "serving");
      this.servingFlags.clear();
      return this;
    }

    /** One known flag (the tokenizer refused unknown ones). */
    private void set(String flag, String value) {
      if (ServingConfig.FLAGS.contains(flag)) {
        servingFlags.put(flag, value);
      } else if (flag.equals("--port")) {
        port = parsed(flag, value, Integer::parseInt);
      } else if (flag.equals("--bind-address")) {
        bindAddress = value;
      } else {
        hami.set(flag, value);
      }
    }

    /**
     * @throws InvalidExtenderConfigException naming the refused flag and value
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
      return new ServingConfig(
          flag("--max-connections", s.maxConnections(), ExtenderConfig::int32),
          flag("--request-header-timeout", s.requestHeaderTimeout(), GoDuration::parse),
          flag("--request-body-timeout", s.requestBodyTimeout(), GoDuration::parse),
          flag("--max-request-body-bytes", s.maxRequestBodyBytes(), ExtenderConfig::int64),
          flag("--max-in-flight-body-bytes", s.maxInFlightBodyBytes(), ExtenderConfig::int64),
          flag("--max-filter-nodes", s.maxFilterNodes(), ExtenderConfig::int32),
          flag("--work-threads", s.workThreads(), ExtenderConfig::int32),
          flag(
              "--scheduler-name",
              s.schedulerNames(),
              v -> Arrays.stream(v.split(",", -1)).map(String::trim).toList()),
          flag("--tls-cert-file", s.tlsCertFile(), ExtenderConfig::path),
          flag("--tls-private-key-file", s.tlsPrivateKeyFile(), ExtenderConfig::path),
          flag("--client-ca-file", s.clientCaFile(), ExtenderConfig::path),
          flag("--health-port", s.healthPort(), v -> OptionalInt.of(int32(v))));
    }

    private <T> T flag(String flag, T dflt, Function<String, T> parse) {
      String v = servingFlags.get(flag);
      return v == null ? dflt : parsed(flag, v, parse);
    }
  }

  /** {@code parse(value)}, or an error naming the flag, the value and why. */
  private static <T> T parsed(String flag, String value, Function<String, T> parse) {
    try {
      return parse.apply(value);
    } catch (IllegalArgumentException | ArithmeticException e) {
      String why =
          e instanceof NumberFormatException
              ? "not an integer"
              : e instanceof ArithmeticException ? "out of range" : e.getMessage();
      throw new InvalidExtenderConfigException(
          "invalid argument \"" + value + "\" for \"" + flag + "\" flag: " + why, e);
    }
  }

  private static long int64(String v) {
    return Long.parseLong(v.trim());
  }

  private static int int32(String v) {
    return Math.toIntExact(int64(v));
  }

  private static Optional<Path> path(String v) {
    if (v.isBlank()) {
      throw new IllegalArgumentException("must not be blank");
    }
    return Optional.of(Path.of(v));
  }
}
