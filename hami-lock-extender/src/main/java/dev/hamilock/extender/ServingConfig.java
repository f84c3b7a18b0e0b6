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
 * How the extender serves the network: bounds, served scheduler names and TLS ({@link
 * ExtenderConfig}'s flags of the same names).
 *
 * @param maxConnections open TCP connections at once ({@code --max-connections}), &ge; 1; more wait
 *     in the accept backlog
 * @param requestHeaderTimeout time to send a request's headers, from connect or the last response
 * @param requestBodyTimeout time to send the body once the headers are in
 * @param maxRequestBodyBytes largest body, &ge; 1; a larger {@code Content-Length} is answered 413
 *     before any body byte is read
 * @param maxInFlightBodyBytes bytes of all bodies read or worked on at once, &ge; {@code
 *     maxRequestBodyBytes}; over it 503 before the body is read (no {@code Content-Length} counts
 *     as the per-body cap)
 * @param maxFilterNodes distinct candidate nodes per filter request, &ge; 1; more is answered 400
 * @param workThreads filter/bind requests worked on at once, &ge; 1
 * @param schedulerNames served {@code spec.schedulerName}s (HAMi's chart: {@code hami-scheduler}),
 *     not empty, no blanks
 * @param tlsCertFile serving certificate chain (PEM), with {@code tlsPrivateKeyFile}: serve HTTPS,
 *     reloaded when the files change (kube-scheduler's extender {@code enableHTTPS: true})
 * @param tlsPrivateKeyFile serving key file (PEM, PKCS#8 or PKCS#1), with {@code tlsCertFile}
 * @param clientCaFile client CA bundle (PEM): require a client certificate signed by it; needs TLS
 * @param healthPort plain-HTTP port (0..65535, 0 = ephemeral) also answering {@code /healthz},
 *     {@code /readyz} and {@code /metrics} outside {@code maxConnections} (its own bound: {@value
 *     #HEALTH_MAX_CONNECTIONS} connections), or empty for none
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

  /** A filter request's refusal for naming more than {@code max} distinct candidate nodes. */
  static RequestRejectedException tooManyNodes(int max, int given) {
    return new RequestRejectedException(
        "too_many_nodes",
        "extender args name more than %d distinct candidate nodes (%d given); the cap is %s=%1$d"
            .formatted(max, given, "--max-filter-nodes"));
  }

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
