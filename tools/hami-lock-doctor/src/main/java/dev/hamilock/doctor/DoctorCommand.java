package dev.hamilock.doctor;

import dev.hamilock.core.GoDuration;
import dev.hamilock.core.LockOwner;
import dev.hamilock.device.spi.VendorRegistry;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.Config;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The {@code hami-lock doctor} command: {@code java -jar hami-lock-doctor.jar [--kubeconfig F]
 * [--namespace NS] [--json] [--lock-timeout D] [COMMAND]}. Commands: {@code diagnose} (default),
 * {@code locks}, {@code unlock NODE [--key K] --holder NS/POD [--dry-run] [--force]}, {@code gang
 * NS/PODGROUP}, {@code audit}, {@code preempt NS/POD}. Exit status: 0 no error finding, 1 error
 * findings (or {@code unlock} refused), 2 the cluster could not be read (the message names what and
 * why) or bad usage.
 */
public final class DoctorCommand {

  static final String USAGE =
      String.join(
          "\n",
          "usage: hami-lock-doctor [--kubeconfig FILE] [--namespace NS] [--json] [--lock-timeout D] [COMMAND]",
          "  diagnose                 (default) the guide's troubleshooting symptoms from the live cluster, with fixes",
          "  locks                    every node's lock annotations decoded and judged, with GPU registration summary",
          "  unlock NODE --holder NS/POD [--key K] [--dry-run] [--force]",
          "                           release one lock only if NS/POD still holds it (one compare-and-delete);",
          "                           a lock held by a live pod within its timeout only with --force (risks",
          "                           the device plugin serving the wrong pod and a bind in flight over-committing)",
          "  gang NS/PODGROUP         a PodGroup's members, quorum, phases, events, RBAC, bind-phase and lock waits",
          "  audit                    over-committed cards, misplaced allocations and uncounted GPU pods (exit 1 on any)",
          "  preempt NS/POD           dry run: which lower-priority pods preemption would evict for NS/POD, on which node",
          "  --kubeconfig FILE        default: $KUBECONFIG, ~/.kube/config, or in-cluster (none: exit 2)",
          "  --namespace NS           limit pods, events and PodGroups to NS (diagnose)",
          "  --json                   JSON instead of tables",
          "  --lock-timeout D         node lock timeout (Go duration; default $HAMI_NODELOCK_EXPIRE or 5m)",
          "  exit: 0 no errors, 1 errors found, 2 could not read the cluster or bad usage",
          "");

  private static final Set<String> COMMANDS =
      Set.of("diagnose", "locks", "unlock", "gang", "audit", "preempt");

  private DoctorCommand() {}

  /**
   * Runs the command and exits the JVM with its status.
   *
   * @param args command-line arguments
   */
  public static void main(String[] args) {
    System.exit(run(List.of(args), System.out, System.err, DoctorCommand::client, d -> d));
  }

  /**
   * Runs the command without exiting.
   *
   * @param args command-line arguments
   * @param out where the report goes
   * @param err where usage and connection errors go
   * @param clients makes the API client from the kubeconfig path (empty: the default)
   * @param customize adjusts the doctor's builder (tests: clock, registry)
   * @return the exit status
   */
  public static int run(
      List<String> args,
      PrintStream out,
      PrintStream err,
      ClientFactory clients,
      Function<Doctor.Builder, Doctor.Builder> customize) {
    Objects.requireNonNull(args, "args");
    Optional<Path> kubeconfig = Optional.empty();
    Optional<String> namespace = Optional.empty();
    Optional<String> key = Optional.empty();
    Optional<String> holder = Optional.empty();
    Optional<Duration> lockTimeout = Optional.empty();
    boolean json = false;
    boolean dryRun = false;
    boolean force = false;
    List<String> words = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      try {
        switch (a) {
          case "-h", "--help" -> {
            out.print(USAGE);
            return DoctorReport.EXIT_CLEAN;
          }
          case "--json" -> json = true;
          case "--dry-run" -> dryRun = true;
          case "--force" -> force = true;
          case "--kubeconfig" -> kubeconfig = Optional.of(Path.of(value(args, ++i, a)));
          case "--namespace", "-n" -> namespace = Optional.of(value(args, ++i, a));
          case "--key" -> key = Optional.of(value(args, ++i, a));
          case "--holder" -> holder = Optional.of(value(args, ++i, a));
          case "--lock-timeout" -> lockTimeout = Optional.of(GoDuration.parse(value(args, ++i, a)));
          default -> {
            if (a.startsWith("-")) {
              return usage(err, "unknown option " + a);
            }
            words.add(a);
          }
        }
      } catch (IllegalArgumentException e) {
        return usage(err, e.getMessage());
      }
    }
    String command = words.isEmpty() ? "diagnose" : words.get(0);
    List<String> rest = words.isEmpty() ? List.of() : words.subList(1, words.size());
    if (!COMMANDS.contains(command)) {
      return usage(err, "unknown command " + command);
    }
    String misuse = misuse(command, rest, holder);
    if (misuse != null) {
      return usage(err, misuse);
    }
    String unreadable = kubeconfig.map(DoctorCommand::unreadable).orElse(null);
    if (unreadable != null) {
      err.println(
          "hami-lock-doctor: cannot read kubeconfig " + kubeconfig.get() + ": " + unreadable);
      return DoctorReport.EXIT_UNREADABLE;
    }
    ApiClient client;
    try {
      client = clients.create(kubeconfig);
    } catch (IOException | RuntimeException e) {
      err.println(
          "hami-lock-doctor: cannot use kubeconfig "
              + kubeconfig.map(Path::toString).orElse("(default)")
              + ": "
              + (e instanceof IOException && e.getMessage() != null ? e.getMessage() : e));
      return DoctorReport.EXIT_UNREADABLE;
    }
    Doctor doctor;
    try {
      Doctor.Builder b = Doctor.builder(client).namespace(namespace);
      lockTimeout.ifPresent(b::lockTimeout);
      doctor = customize.apply(b).build();
    } catch (IllegalArgumentException e) {
      return usage(err, e.getMessage());
    }
    DoctorReport report;
    switch (command) {
      case "diagnose" -> report = doctor.diagnose();
      case "locks" -> report = doctor.locks();
      case "unlock" ->
          report =
              doctor.unlock(
                  rest.get(0), key, parseHolder(holder.orElseThrow()).orElseThrow(), dryRun, force);
      case "gang" -> {
        String[] p = rest.get(0).split("/");
        report = doctor.gang(p[0], p[1]);
      }
      case "audit" -> report = new Audit(client, VendorRegistry.discover()).run();
      case "preempt" -> {
        String[] p = rest.get(0).split("/");
        report =
            new Preempt(client, VendorRegistry.discover(), InstantSource.system()).run(p[0], p[1]);
      }
      default -> throw new IllegalStateException("unhandled command " + command);
    }
    out.print(json ? ReportWriter.json(report) : ReportWriter.table(report));
    out.flush();
    for (ClusterReadException e : report.unreadable()) {
      err.println("hami-lock-doctor: " + e.getMessage());
    }
    return report.exitStatus();
  }

  /**
   * @return what is wrong with the command's arguments, checked before any kubeconfig is read; null
   *     when nothing is
   */
  private static String misuse(String command, List<String> rest, Optional<String> holder) {
    boolean oneSlashed = rest.size() == 1 && rest.get(0).split("/").length == 2;
    return switch (command) {
      case "diagnose", "locks", "audit" ->
          rest.isEmpty() ? null : command + " takes no arguments: " + rest;
      case "unlock" ->
          rest.size() != 1 || holder.isEmpty()
              ? "unlock needs NODE and --holder NS/POD"
              : parseHolder(holder.get()).isPresent()
                  ? null
                  : "--holder must be NAMESPACE/POD, was \"" + holder.get() + "\"";
      case "gang" -> oneSlashed ? null : "gang needs NAMESPACE/PODGROUP";
      case "preempt" -> oneSlashed ? null : "preempt needs NAMESPACE/POD";
      default -> null;
    };
  }

  /** {@return why {@code file} cannot be read as a kubeconfig, or null if it can} */
  static String unreadable(Path file) {
    if (!Files.exists(file)) {
      return "no such file";
    }
    if (Files.isDirectory(file)) {
      return "is a directory";
    }
    return Files.isReadable(file) ? null : "permission denied";
  }

  private static Optional<LockOwner> parseHolder(String text) {
    String[] p = text.split("/");
    if (p.length != 2 || p[0].isBlank() || p[1].isBlank()) {
      return Optional.empty();
    }
    try {
      return Optional.of(LockOwner.of(p[0], p[1]));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static String value(List<String> args, int i, String option) {
    if (i >= args.size()) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args.get(i);
  }

  /**
   * Whether client-java's default resolution ({@code Config.defaultClient()}: {@code $KUBECONFIG},
   * {@code ~/.kube/config}, the in-cluster service account) finds a configuration; without one it
   * silently falls back to {@code http://localhost:8080}, which the doctor refuses instead.
   */
  static boolean defaultConfigExists(Map<String, String> env, Path home) {
    String file = env.getOrDefault("KUBECONFIG", "");
    return (!file.isEmpty() && Files.isReadable(Path.of(file.split(File.pathSeparator)[0])))
        || Files.isReadable(home.resolve(".kube").resolve("config"))
        || (env.containsKey("KUBERNETES_SERVICE_HOST")
            && Files.isReadable(Path.of(Config.SERVICEACCOUNT_TOKEN_PATH)));
  }

  private static int usage(PrintStream err, String message) {
    err.print("hami-lock-doctor: " + message + "\n" + USAGE);
    return DoctorReport.EXIT_UNREADABLE;
  }

  /** Makes the API client for a kubeconfig path (empty: client-java's default resolution). */
  @FunctionalInterface
  public interface ClientFactory {
    /**
     * @param kubeconfig the file, or empty for the default
     * @return the client
     * @throws IOException if the file cannot be read or used
     */
    ApiClient create(Optional<Path> kubeconfig) throws IOException;
  }

  static ApiClient client(Optional<Path> kubeconfig) throws IOException {
    if (kubeconfig.isEmpty()
        && !defaultConfigExists(System.getenv(), Path.of(System.getProperty("user.home")))) {
      throw new IOException(
          "none found ($KUBECONFIG unset or unreadable, no ~/.kube/config, not in a cluster);"
              + " give --kubeconfig FILE");
    }
    ApiClient c =
        kubeconfig.isPresent()
            ? Config.fromConfig(kubeconfig.get().toString())
            : Config.defaultClient();
    c.setReadTimeout(30_000);
    return c;
  }
}
