package dev.hamilock.examples.extender;

import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.extender.ExtenderConfig;
import dev.hamilock.extender.InvalidExtenderConfigException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The example's command line: HAMi's scheduler flags ({@link ExtenderConfig#parse}, Go duration
 * syntax, {@code cmd/scheduler/main.go}) plus where the Kubernetes API is.
 *
 * @param config the extender settings (validated: the retry timeout is below the extender HTTP
 *     timeout)
 * @param kubeconfig {@code --kubeconfig PATH}; empty = client-java's standard discovery ({@code
 *     $KUBECONFIG}, {@code ~/.kube/config}, then the in-cluster service account)
 * @param help {@code --help} was given (nothing else is validated then)
 * @param gpuPreemption {@code --gpu-preemption} (off by default): the extender preempts for a pod
 *     whose GPU request fits nowhere ({@link RunningExtender#start(ExtenderConfig,
 *     io.kubernetes.client.openapi.ApiClient, io.kubernetes.client.openapi.ApiClient,
 *     dev.hamilock.device.spi.VendorRegistry, boolean)})
 */
public record ExtenderOptions(
    ExtenderConfig config, Optional<Path> kubeconfig, boolean help, boolean gpuPreemption) {

  /** The {@code --help} text. */
  public static final String USAGE =
      """
      Usage: java -jar examples/extender/target/hami-extender.jar [flags]

      A HAMi-compatible kube-scheduler extender (filter and bind verbs, nodeCacheCapable) on
      hami-lock: HAMi's Filter and gang-aware Bind with node locks on the cluster's Node objects.

      Flags (Go durations: 28s, 1m30s, 300ms, 0):
        --node-lock-retry-timeout DUR  how long a gang member's bind waits for a contended node lock
                                       (default 28s; 0 disables waiting)
        --node-lock-timeout DUR        age after which a node lock counts as expired (default:
                                       $HAMI_NODELOCK_EXPIRE if set, else 5m; the flag wins)
        --extender-http-timeout DUR    the httpTimeout of this extender in kube-scheduler's
                                       configuration (default 30s); the retry timeout must be below it
        --port N                       HTTP port (default 8080; 0 picks a free one)
        --bind-address ADDR            listen address (default 127.0.0.1: a sidecar of kube-scheduler)
        --node-scheduler-policy P      binpack or spread (default binpack)
        --gpu-scheduler-policy P       device policy: a comma list of binpack, spread, numa, mutex,
                                       topology-aware (default spread); other words refuse to start
        --scheduler-name NAMES         comma list of spec.schedulerName values whose pods are served
                                       (default hami-scheduler); other pods are refused, untouched
        --max-filter-nodes N           distinct candidate nodes per filter request (default 5000)
        --max-connections N            open connections at once (default 128)
        --request-header-timeout DUR   time to send a request head (default 10s)
        --request-body-timeout DUR     time to send a request body (default 10s)
        --max-request-body-bytes N     largest body; a larger Content-Length gets 413 unread
                                       (default 4194304)
        --max-in-flight-body-bytes N   bytes of all bodies in flight; over it 503 (default 67108864)
        --work-threads N               filter/bind requests worked on at once (default 32)
        --tls-cert-file PATH           PEM serving certificate: serve HTTPS (with --tls-private-key-file;
                                       both re-read when they change)
        --tls-private-key-file PATH    PEM key (PKCS#8 or PKCS#1 RSA)
        --client-ca-file PATH          PEM CA bundle: require client certificates signed by it
        --health-port N                also answer /healthz, /readyz, /metrics on this plain-HTTP port,
                                       outside --max-connections: point the kubelet's probes here
                                       (default: none; 0 picks a free one)
        --kubeconfig PATH              the cluster to use; default: $KUBECONFIG, ~/.kube/config, or
                                       the in-cluster service account
        --gpu-preemption               evict lower-priority pods (Eviction API, PDBs honoured) for a
                                       pod whose GPU request fits nowhere, reserving the freed slices
                                       (default off; needs the grant in
                                       examples/extender/deploy-gpu-preemption/rbac.yaml)
        --help                         this text

      Routes: POST /filter, POST /bind, POST /preempt (kube-scheduler's preemptVerb), GET /healthz,
      GET /readyz (ready once the node watches and the node/pod caches synced), GET /metrics
      (Prometheus).
      Exit codes: 0 stopped normally, 1 bad flags or kubeconfig, or the port is taken (nothing
      started), 2 internal error.
      """;

  /** Validates. */
  public ExtenderOptions {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(kubeconfig, "kubeconfig");
  }

  /**
   * Parses the command line ({@code --name=value} or {@code --name value}).
   *
   * @param args the arguments
   * @return the options
   * @throws InvalidExtenderConfigException naming the flag: an unknown flag, a missing value, a
   *     value that is not a Go duration or port, or the refuse-to-start rule ({@code refusing to
   *     start: --node-lock-retry-timeout=30s must be below --extender-http-timeout=30s})
   */
  public static ExtenderOptions parse(List<String> args) {
    return parse(args, System.getenv());
  }

  /**
   * As {@link #parse(List)} with a given environment: {@code HAMI_NODELOCK_EXPIRE} applies when
   * {@code --node-lock-timeout} is absent (explicit flag &gt; environment &gt; 5 min, HAMi#2790).
   *
   * @param args the arguments
   * @param environment the process environment
   * @return the options
   * @throws InvalidExtenderConfigException as {@link #parse(List)}
   */
  public static ExtenderOptions parse(
      List<String> args, java.util.Map<String, String> environment) {
    Objects.requireNonNull(args, "args");
    Objects.requireNonNull(environment, "environment");
    List<String> hami = new ArrayList<>();
    Path kubeconfig = null;
    boolean gpuPreemption = false;
    for (int i = 0; i < args.size(); i++) {
      String a = Objects.requireNonNull(args.get(i), "args[" + i + "]");
      if (a.equals("--help") || a.equals("-h")) {
        return new ExtenderOptions(
            ExtenderConfig.builder()
                .schedulerFlags(
                    HamiSchedulerFlags.builder().environment(java.util.Map.of()).build())
                .build(),
            Optional.empty(),
            true,
            false);
      }
      String value;
      if (a.equals("--gpu-preemption")) {
        gpuPreemption = true;
        continue;
      } else if (a.startsWith("--kubeconfig=")) {
        value = a.substring("--kubeconfig=".length());
      } else if (a.equals("--kubeconfig")) {
        if (i + 1 >= args.size()) {
          throw new InvalidExtenderConfigException("flag needs an argument: --kubeconfig");
        }
        value = args.get(++i);
      } else {
        hami.add(a);
        continue;
      }
      if (value.isBlank()) {
        throw new InvalidExtenderConfigException("--kubeconfig must not be blank");
      }
      try {
        kubeconfig = Path.of(value);
      } catch (InvalidPathException e) {
        throw new InvalidExtenderConfigException(
            "--kubeconfig " + value + ": " + e.getMessage(), e);
      }
    }
    ExtenderConfig config;
    try {
      config = ExtenderConfig.parse(environment, hami.toArray(String[]::new));
    } catch (InvalidExtenderConfigException e) {
      String m = e.getMessage();
      if (m == null || !m.startsWith("unknown flag: ") || !m.endsWith(")")) {
        throw e;
      }
      // the library knows its flags; this program adds three of its own to the list
      throw new InvalidExtenderConfigException(
          m.substring(0, m.length() - 1) + ", --kubeconfig, --gpu-preemption, --help)", e);
    }
    return new ExtenderOptions(config, Optional.ofNullable(kubeconfig), false, gpuPreemption);
  }
}
