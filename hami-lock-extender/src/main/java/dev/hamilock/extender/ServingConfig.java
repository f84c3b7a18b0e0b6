package dev.hamilock.extender;

import dev.hamilock.core.GoDuration;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * How the extender serves the network (issue 15): bounds against slow or flooding callers, which
 * pods it may bind, and TLS. Part of {@link ExtenderConfig}; flags in {@link ExtenderConfig#parse}.
 *
 * <table>
 *   <caption>Flags</caption>
 *   <tr><th>flag</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code --max-connections}</td><td>128</td><td>open TCP connections at once; further
 *       connections wait in the accept backlog</td></tr>
 *   <tr><td>{@code --request-header-timeout}</td><td>{@code 10s}</td><td>time a connection may
 *       take to send a request's headers (from connect, or from the previous response)</td></tr>
 *   <tr><td>{@code --request-body-timeout}</td><td>{@code 10s}</td><td>time to send the body once
 *       the headers are in</td></tr>
 *   <tr><td>{@code --max-request-body-bytes}</td><td>4194304 (4 MiB)</td><td>largest body; a
 *       {@code Content-Length} above it is answered 413 before any body byte is read. A
 *       {@code nodeCacheCapable} ExtenderArgs of 5000 node names is about 100 KiB</td></tr>
 *   <tr><td>{@code --max-in-flight-body-bytes}</td><td>67108864 (64 MiB)</td><td>bytes of all
 *       bodies being read or worked on at once; over it a request gets 503 before its body is
 *       read (a body without {@code Content-Length} counts as the per-body cap)</td></tr>
 *   <tr><td>{@code --max-filter-nodes}</td><td>5000 (Kubernetes' largest supported cluster)</td>
 *       <td>distinct {@code NodeNames} (or {@code Nodes.items}) in one filter request; more is
 *       answered 400 with the count and the cap in {@code Error}</td></tr>
 *   <tr><td>{@code --work-threads}</td><td>32</td><td>filter/bind requests worked on at once
 *       (gang members wait for node locks on them); health and metrics are answered apart</td></tr>
 *   <tr><td>{@code --scheduler-name}</td><td>{@code hami-scheduler}</td><td>comma list of the
 *       {@code spec.schedulerName}s whose pods this extender binds (HAMi's chart:
 *       {@code schedulerName: hami-scheduler})</td></tr>
 *   <tr><td>{@code --tls-cert-file}, {@code --tls-private-key-file}</td><td>none</td><td>PEM
 *       serving certificate (chain) and PKCS#8/PKCS#1 key: serve HTTPS, reloaded when the files
 *       change (kube-scheduler's extender {@code enableHTTPS: true})</td></tr>
 *   <tr><td>{@code --client-ca-file}</td><td>none</td><td>PEM CA bundle: require a client
 *       certificate signed by it (the scheduler's {@code tlsConfig.certFile/keyFile})</td></tr>
 *   <tr><td>{@code --health-port}</td><td>none</td><td>also answer {@code /healthz}, {@code
 *       /readyz} and {@code /metrics} on this port (plain HTTP, same address; 0 picks a free one),
 *       outside {@code --max-connections}: point the kubelet's probes at it so that callers
 *       holding every connection slot of {@code --port} cannot make them time out (issue 24 item
 *       9). Its own bound: {@value #HEALTH_MAX_CONNECTIONS} connections</td></tr>
 * </table>
 *
 * @param maxConnections open connections at once, &ge; 1
 * @param requestHeaderTimeout header read bound, positive
 * @param requestBodyTimeout body read bound, positive
 * @param maxRequestBodyBytes per-body cap, &ge; 1
 * @param maxInFlightBodyBytes all-bodies cap, &ge; {@code maxRequestBodyBytes}
 * @param maxFilterNodes distinct candidate nodes per filter request, &ge; 1
 * @param workThreads filter/bind threads, &ge; 1
 * @param schedulerNames served {@code schedulerName}s, not empty, no blanks
 * @param tlsCertFile serving certificate file (PEM), with {@code tlsPrivateKeyFile}
 * @param tlsPrivateKeyFile serving key file (PEM), with {@code tlsCertFile}
 * @param clientCaFile client CA bundle (PEM); needs TLS
 * @param healthPort the health port, 0..65535 (0 = ephemeral), or empty for none
 */
public record ServingConfig(
    int maxConnections,
    Duration requestHeaderTimeout,
    Duration requestBodyTimeout,
    long maxRequestBodyBytes,
    long maxInFlightBodyBytes,
    int maxFilterNodes,
    int workThreads,
    List<String> schedulerNames,
    Optional<Path> tlsCertFile,
    Optional<Path> tlsPrivateKeyFile,
    Optional<Path> clientCaFile,
    OptionalInt healthPort) {

  /** Open connections at once on the {@code --health-port}: 16. */
  public static final int HEALTH_MAX_CONNECTIONS = 16;

  /** HAMi's chart's scheduler name ({@code charts/hami/values.yaml} {@code schedulerName}). */
  public static final String DEFAULT_SCHEDULER_NAME = "hami-scheduler";

  /** Default {@code --max-filter-nodes}: 5000. */
  public static final int DEFAULT_MAX_FILTER_NODES = 5000;

  /** Default {@code --max-request-body-bytes}: 4 MiB. */
  public static final long DEFAULT_MAX_REQUEST_BODY_BYTES = 4L << 20;

  /** Default {@code --max-in-flight-body-bytes}: 64 MiB. */
  public static final long DEFAULT_MAX_IN_FLIGHT_BODY_BYTES = 64L << 20;

  /** The flags this record reads. */
  static final List<String> FLAGS =
      List.of(
          "--max-connections",
          "--request-header-timeout",
          "--request-body-timeout",
          "--max-request-body-bytes",
          "--max-in-flight-body-bytes",
          "--max-filter-nodes",
          "--work-threads",
          "--scheduler-name",
          "--tls-cert-file",
          "--tls-private-key-file",
          "--client-ca-file",
          "--health-port");

  /**
   * @throws InvalidExtenderConfigException naming the flag and value
   */
  public ServingConfig {
    atLeast1("--max-connections", maxConnections);
    atLeast1("--max-filter-nodes", maxFilterNodes);
    atLeast1("--work-threads", workThreads);
    positive("--request-header-timeout", requestHeaderTimeout);
    positive("--request-body-timeout", requestBodyTimeout);
    atLeast1("--max-request-body-bytes", maxRequestBodyBytes);
    if (maxInFlightBodyBytes < maxRequestBodyBytes) {
      throw new InvalidExtenderConfigException(
          "--max-in-flight-body-bytes=%d must be at least --max-request-body-bytes=%d"
              .formatted(maxInFlightBodyBytes, maxRequestBodyBytes));
    }
    if (schedulerNames == null
        || schedulerNames.isEmpty()
        || schedulerNames.stream().anyMatch(n -> n == null || n.isBlank())) {
      throw new InvalidExtenderConfigException(
          "--scheduler-name must name at least one scheduler, no blanks: " + schedulerNames);
    }
    schedulerNames = List.copyOf(schedulerNames);
    Objects.requireNonNull(tlsCertFile, "tlsCertFile");
    Objects.requireNonNull(tlsPrivateKeyFile, "tlsPrivateKeyFile");
    Objects.requireNonNull(clientCaFile, "clientCaFile");
    if (tlsCertFile.isPresent() != tlsPrivateKeyFile.isPresent()) {
      throw new InvalidExtenderConfigException(
          "--tls-cert-file and --tls-private-key-file go together (got only "
              + (tlsCertFile.isPresent() ? "--tls-cert-file" : "--tls-private-key-file")
              + ")");
    }
    Objects.requireNonNull(healthPort, "healthPort");
    if (healthPort.isPresent() && (healthPort.getAsInt() < 0 || healthPort.getAsInt() > 65535)) {
      throw new InvalidExtenderConfigException(
          "--health-port must be in 0..65535: " + healthPort.getAsInt());
    }
    if (clientCaFile.isPresent() && tlsCertFile.isEmpty()) {
      throw new InvalidExtenderConfigException(
          "--client-ca-file needs --tls-cert-file and --tls-private-key-file (client certificates need TLS)");
    }
  }

  private static void atLeast1(String flag, long v) {
    if (v < 1) {
      throw new InvalidExtenderConfigException(flag + " must be at least 1: " + v);
    }
  }

  private static void positive(String flag, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new InvalidExtenderConfigException(
          flag + " must be positive: " + (d == null ? "null" : GoDuration.format(d)));
    }
  }

  /** The defaults (no TLS, {@code hami-scheduler}). */
  public static ServingConfig defaults() {
    return new ServingConfig(
        128,
        Duration.ofSeconds(10),
        Duration.ofSeconds(10),
        DEFAULT_MAX_REQUEST_BODY_BYTES,
        DEFAULT_MAX_IN_FLIGHT_BODY_BYTES,
        DEFAULT_MAX_FILTER_NODES,
        32,
        List.of(DEFAULT_SCHEDULER_NAME),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        OptionalInt.empty());
  }

  /** Whether HTTPS is served. */
  public boolean tls() {
    return tlsCertFile.isPresent();
  }

  /** Flags reproducing these settings ({@code --name=value}). */
  public List<String> toArgs() {
    List<String> a =
        new ArrayList<>(
            List.of(
                "--max-connections=" + maxConnections,
                "--request-header-timeout=" + GoDuration.format(requestHeaderTimeout),
                "--request-body-timeout=" + GoDuration.format(requestBodyTimeout),
                "--max-request-body-bytes=" + maxRequestBodyBytes,
                "--max-in-flight-body-bytes=" + maxInFlightBodyBytes,
                "--max-filter-nodes=" + maxFilterNodes,
                "--work-threads=" + workThreads,
                "--scheduler-name=" + String.join(",", schedulerNames)));
    tlsCertFile.ifPresent(p -> a.add("--tls-cert-file=" + p));
    tlsPrivateKeyFile.ifPresent(p -> a.add("--tls-private-key-file=" + p));
    clientCaFile.ifPresent(p -> a.add("--client-ca-file=" + p));
    healthPort.ifPresent(p -> a.add("--health-port=" + p));
    return a;
  }
}
