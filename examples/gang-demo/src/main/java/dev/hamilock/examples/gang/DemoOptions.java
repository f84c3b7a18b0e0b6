package dev.hamilock.examples.gang;

import static com.google.common.base.Preconditions.checkArgument;

import dev.hamilock.core.GoDuration;
import dev.hamilock.core.InvalidGoDurationException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The gang demo's command line, parsed and validated.
 *
 * @param manifests input files (Pod, PodGroup, Node; YAML or JSON, multi-document); empty = the
 *     built-in guide gang on two real GPU nodes
 * @param replicas scheduler replicas binding concurrently, each with its own API client and lock
 *     instance; 1..16 (default 2)
 * @param allocateMs time the simulated HAMi device plugin's {@code Allocate} takes before it hands
 *     off and releases the node lock, in ms; 0..10000 (default 20)
 * @param retryTimeout gang members' node-lock retry timeout (HAMi {@code
 *     --node-lock-retry-timeout}, Go duration; default {@code 28s}; {@code 0} disables the gang
 *     wait)
 * @param mode which runs to make
 * @param json print one JSON document instead of the text report
 * @param timeline where to write the SVG lock timeline, if asked
 * @param kubeconfig run the binds against this real cluster instead of the embedded API emulator
 * @param yes confirmation needed before acting on a real cluster
 * @param simulateDevicePlugin with {@code kubeconfig}: run the simulated HAMi device plugin per
 *     node in this process (Allocate after {@code allocateMs}, hand-off, lock release), for a
 *     cluster without GPUs or HAMi's plugin, such as a bare kube-apiserver on etcd; the
 *     verification (no overlap, no lock left) then runs too
 * @param backoffScale factor on kube-scheduler's re-queue backoff (1 s doubling to 10 s) for
 *     fail-fast losers; (0, 1], default 1 (real time)
 * @param inMemory bind on the bind module's in-process cluster instead of the embedded API emulator
 *     ({@code --backend memory}; no HTTP, for comparison)
 * @param help print usage and exit 0
 */
public record DemoOptions(
    List<Path> manifests,
    int replicas,
    int allocateMs,
    Duration retryTimeout,
    Mode mode,
    boolean json,
    Optional<Path> timeline,
    Optional<Path> kubeconfig,
    boolean yes,
    boolean simulateDevicePlugin,
    double backoffScale,
    boolean inMemory,
    boolean help) {

  /** Which bind strategy to run. */
  public enum Mode {
    /** The library's gang-aware flow: members wait for the node lock (HAMi's gang retry). */
    GANG,
    /** No gang retry: contended members fail and are re-queued with kube-scheduler's backoff. */
    FAIL_FAST,
    /** Both, gang first, printed side by side. */
    BOTH;

    /**
     * @return the mode's command-line text
     */
    public String flag() {
      return this == FAIL_FAST ? "fail-fast" : name().toLowerCase(Locale.ROOT);
    }
  }

  /** Validates and copies. @throws IllegalArgumentException naming the bad option */
  public DemoOptions {
    manifests = List.copyOf(manifests);
    Objects.requireNonNull(retryTimeout, "retryTimeout");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(timeline, "timeline");
    Objects.requireNonNull(kubeconfig, "kubeconfig");
    checkArgument(
        replicas >= 1 && replicas <= 16, "--replicas must be between 1 and 16: %s", replicas);
    checkArgument(
        allocateMs >= 0 && allocateMs <= 10_000,
        "--allocate-ms must be between 0 and 10000: %s",
        allocateMs);
    checkArgument(
        !retryTimeout.isNegative(),
        "--retry-timeout must not be negative: %s",
        GoDuration.format(retryTimeout));
    checkArgument(
        !simulateDevicePlugin || kubeconfig.isPresent(),
        "--simulate-device-plugin needs --kubeconfig (the emulator and memory backends always simulate the"
            + " device plugin)");
    checkArgument(
        backoffScale > 0 && backoffScale <= 1,
        "--backoff-scale must be in (0, 1]: %s",
        backoffScale);
  }

  /**
   * @return the defaults: built-in input, 2 replicas, 20 ms Allocate, 28 s, both modes, text
   */
  public static DemoOptions defaults() {
    return new DemoOptions(
        List.of(),
        2,
        20,
        Duration.ofSeconds(28),
        Mode.BOTH,
        false,
        Optional.empty(),
        Optional.empty(),
        false,
        false,
        1.0,
        false,
        false);
  }

  /** The usage text printed by {@code --help}. */
  public static final String USAGE =
      String.join(
          "\n",
          "Usage: java -jar examples/gang-demo/target/gang-demo.jar [options]",
          "",
          "Binds a Coscheduling gang through hami-lock's bind flow from several scheduler replicas at once,",
          "verifies the result, and compares it with fail-fast binding. Without options: the guide's",
          "gang-training PodGroup (4 members, 1 GPU / 3000 MiB / 30 % each) on two real GPU nodes, in an",
          "embedded Kubernetes API emulator with a simulated HAMi device plugin per node.",
          "",
          "Options:",
          "  --manifests FILE...     Pod, PodGroup and Node manifests (YAML or JSON, multi-document) instead",
          "                          of the built-in gang; give Nodes too, or the built-in nodes are used",
          "  --replicas N            scheduler replicas binding concurrently (default 2)",
          "  --allocate-ms MS        simulated device-plugin Allocate time before the lock is released (default 20)",
          "  --retry-timeout DUR     gang node-lock retry timeout, Go duration (default 28s; 0 disables)",
          "  --mode gang|fail-fast|both   which bind strategy to run (default both)",
          "  --backoff-scale F       scale kube-scheduler's re-queue backoff (1s doubling to 10s) by F in (0,1]",
          "                          (default 1: real time)",
          "  --backend emulator|memory  embedded API emulator over HTTP with client-java (default), or the",
          "                          bind module's in-process cluster",
          "  --json                  print one JSON document instead of the text report",
          "  --timeline FILE.svg     write a Gantt chart of who held each node lock when",
          "  --kubeconfig PATH       bind against a real cluster (pods must exist, Pending); no simulated",
          "                          device plugin; prints what it would annotate and bind, and acts only with --yes",
          "  --yes                   confirm acting on the cluster given with --kubeconfig",
          "  --simulate-device-plugin  with --kubeconfig: simulate HAMi's device plugin per node here (Allocate,",
          "                          hand-off, lock release) for a cluster without it, e.g. a bare API server;",
          "                          the overlap and lock checks then run too",
          "  --real-cluster          run the guide's scenarios on a real control plane with the real kube-scheduler",
          "                          and the runnable extender instead (needs Go; --real-cluster --help: its options)",
          "  --help                  this text",
          "",
          "Exit codes: 0 success, 1 user error (bad input, gang cannot be bound, no --yes), 2 internal error.");

  /**
   * Parses the command line.
   *
   * @param args the arguments
   * @return the options
   * @throws UsageException naming the bad or missing option value
   */
  public static DemoOptions parse(List<String> args) throws UsageException {
    DemoOptions d = defaults();
    List<Path> manifests = new ArrayList<>();
    int replicas = d.replicas;
    int allocateMs = d.allocateMs;
    Duration retry = d.retryTimeout;
    Mode mode = d.mode;
    boolean json = false;
    Optional<Path> timeline = Optional.empty();
    Optional<Path> kubeconfig = Optional.empty();
    boolean yes = false;
    boolean simulate = false;
    boolean help = false;
    double backoffScale = 1.0;
    boolean inMemory = false;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      String inline = null;
      if (a.startsWith("--") && a.contains("=")) {
        inline = a.substring(a.indexOf('=') + 1);
        a = a.substring(0, a.indexOf('='));
      }
      switch (a) {
        case "--help", "-h" -> help = true;
        case "--json" -> json = true;
        case "--yes" -> yes = true;
        case "--simulate-device-plugin" -> simulate = true;
        case "--manifests" -> {
          if (inline != null) {
            manifests.add(Path.of(inline));
          }
          while (i + 1 < args.size() && !args.get(i + 1).startsWith("--")) {
            manifests.add(Path.of(args.get(++i)));
          }
          if (manifests.isEmpty()) {
            throw new UsageException("--manifests needs at least one file");
          }
        }
        case "--replicas" -> replicas = integer(a, value(args, i, a, inline));
        case "--allocate-ms" -> allocateMs = integer(a, value(args, i, a, inline));
        case "--retry-timeout" -> {
          String v = value(args, i, a, inline);
          try {
            retry = GoDuration.parse(v);
          } catch (InvalidGoDurationException e) {
            throw new UsageException(
                "--retry-timeout: " + e.getMessage() + " (Go duration, e.g. 28s, 500ms, 1m)");
          }
        }
        case "--mode" -> {
          String v = value(args, i, a, inline);
          mode =
              switch (v) {
                case "gang" -> Mode.GANG;
                case "fail-fast" -> Mode.FAIL_FAST;
                case "both" -> Mode.BOTH;
                default ->
                    throw new UsageException(
                        "--mode must be gang, fail-fast or both: \"" + v + "\"");
              };
        }
        case "--backoff-scale" -> {
          String v = value(args, i, a, inline);
          try {
            backoffScale = Double.parseDouble(v);
          } catch (NumberFormatException e) {
            throw new UsageException("--backoff-scale must be a number in (0, 1]: \"" + v + "\"");
          }
        }
        case "--backend" -> {
          String v = value(args, i, a, inline);
          inMemory =
              switch (v) {
                case "emulator" -> false;
                case "memory" -> true;
                default ->
                    throw new UsageException("--backend must be emulator or memory: \"" + v + "\"");
              };
        }
        case "--timeline" -> timeline = Optional.of(Path.of(value(args, i, a, inline)));
        case "--kubeconfig" -> kubeconfig = Optional.of(Path.of(value(args, i, a, inline)));
        default -> throw new UsageException("unknown option \"" + args.get(i) + "\"");
      }
      if (inline == null
          && Set.of(
                  "--replicas",
                  "--allocate-ms",
                  "--retry-timeout",
                  "--mode",
                  "--backoff-scale",
                  "--timeline",
                  "--kubeconfig",
                  "--backend")
              .contains(a)) {
        i++;
      }
    }
    try {
      return new DemoOptions(
          manifests,
          replicas,
          allocateMs,
          retry,
          mode,
          json,
          timeline,
          kubeconfig,
          yes,
          simulate,
          backoffScale,
          inMemory,
          help);
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    }
  }

  private static String value(List<String> args, int i, String option, String inline)
      throws UsageException {
    if (inline != null) {
      return inline;
    }
    if (i + 1 >= args.size() || args.get(i + 1).startsWith("--")) {
      throw new UsageException(option + " needs a value");
    }
    return args.get(i + 1);
  }

  private static int integer(String option, String v) throws UsageException {
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new UsageException(option + " must be an integer: \"" + v + "\"");
    }
  }

  /** A bad command line (exit code 1); the message names the option. */
  public static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what is wrong, naming the option
     */
    public UsageException(String message) {
      super(message);
    }
  }
}
