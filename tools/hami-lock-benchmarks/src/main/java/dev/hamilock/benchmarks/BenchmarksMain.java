package dev.hamilock.benchmarks;

import dev.hamilock.benchmarks.convergence.Algorithm;
import dev.hamilock.benchmarks.convergence.Algorithms;
import dev.hamilock.benchmarks.convergence.ConvergenceHarness;
import dev.hamilock.benchmarks.convergence.ConvergenceResults;
import dev.hamilock.benchmarks.convergence.HarnessSettings;
import dev.hamilock.benchmarks.convergence.Scenario;
import dev.hamilock.benchmarks.jmh.JmhSuite;
import dev.hamilock.benchmarks.reads.ConsistentReadLatency;
import dev.hamilock.benchmarks.report.Goal;
import dev.hamilock.benchmarks.report.Goals;
import dev.hamilock.benchmarks.report.MachineInfo;
import dev.hamilock.benchmarks.report.ReportWriter;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.RealApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Runs the benchmark suite and writes the report.
 *
 * <pre>
 * java -jar tools/hami-lock-benchmarks/target/hami-lock-benchmarks.jar [options]
 *   --out DIR            output directory (default tools/hami-lock-benchmarks/results)
 *   --reps N             repetitions per scenario and algorithm (default 5)
 *   --backoff-scale S    divisor of kube-scheduler's backoff for baseline (b) (default 10)
 *   --skip-jmh           run only the convergence harness
 *   --quick              a half-minute check: 1 repetition, N ∈ {2, 5} at 0 ms / 1 replica, short JMH;
 *                        output to target/quick-results unless --out; no goal judged
 *   --only SPEC          run only scenarios matching SPEC, e.g. {@code N=32,replicas=3,latency=0}
 *                        (keys N, nodes, latency, replicas; repeat the option to match any of several)
 *   --algorithm KEY      run only the algorithm with this key (e.g. ours-watch); repeatable
 *   --backend B          emulator (default) or real: the real kube-apiserver + etcd of
 *                        testing/realcluster (build it first with testing/realcluster/build; run from
 *                        the repository root); latency=0 scenarios only
 *   --reads              instead of the suite: how long a bind's re-fit reads wait right after a
 *                        write, on the backend (ConsistentReadLatency); writes consistent-reads.md
 * </pre>
 *
 * Exit status 0 after writing the report or printing {@code --help}, 2 for a bad option.
 */
public final class BenchmarksMain {

  /** The synopsis printed by {@code --help} and after a bad option. */
  static final String USAGE =
      String.join(
          "\n",
          "usage: java -jar tools/hami-lock-benchmarks/target/hami-lock-benchmarks.jar [options]",
          "  --out DIR          output directory (default tools/hami-lock-benchmarks/results)",
          "  --reps N           repetitions per scenario and algorithm (default 5)",
          "  --backoff-scale S  divisor of kube-scheduler's backoff for baseline (b) (default 10)",
          "  --skip-jmh         run only the convergence harness",
          "  --quick            a half-minute check of the command: 1 repetition, N in {2, 5}, short",
          "                     JMH; writes to tools/hami-lock-benchmarks/target/quick-results",
          "                     unless --out is given, and judges no goal",
          "  --only SPEC        only scenarios matching SPEC, e.g. N=32,replicas=3,latency=0 (repeatable)",
          "  --algorithm KEY    only this algorithm (repeatable); keys: " + Algorithms.keys(),
          "  --backend B        emulator (default) or real (after testing/realcluster/build)",
          "  --reads            only the re-fit reads' wait after a write (consistent-reads.md)",
          "  --help             this text",
          "");

  private BenchmarksMain() {}

  /**
   * @param args options (see class doc)
   * @throws Exception if a benchmark fails to run or the report cannot be written
   */
  public static void main(String[] args) throws Exception {
    System.setProperty(
        "org.slf4j.simpleLogger.defaultLogLevel",
        System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
    Path out = null;
    int reps = 5;
    double backoffScale = 10;
    boolean skipJmh = false;
    boolean quick = false;
    List<String> only = new java.util.ArrayList<>();
    List<String> algorithmKeys = new java.util.ArrayList<>();
    String backend = "emulator";
    boolean reads = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--out" -> out = Path.of(value(args, ++i));
        case "--reps" -> reps = Integer.parseInt(value(args, ++i));
        case "--backoff-scale" -> backoffScale = Double.parseDouble(value(args, ++i));
        case "--skip-jmh" -> skipJmh = true;
        case "--quick" -> quick = true;
        case "--only" -> only.add(value(args, ++i));
        case "--algorithm" -> algorithmKeys.add(value(args, ++i));
        case "--backend" -> backend = value(args, ++i);
        case "--reads" -> reads = true;
        case "--help", "-h" -> {
          System.out.print(USAGE);
          return;
        }
        default -> {
          System.err.print("unknown option " + args[i] + "\n" + USAGE);
          System.exit(2);
        }
      }
    }
    if (out == null) { // a quick run checks the command: it never overwrites the published results
      out = Path.of("tools", "hami-lock-benchmarks", quick ? "target/quick-results" : "results");
    }
    if (!backend.equals("emulator") && !backend.equals("real")) {
      System.err.println("--backend must be emulator or real, got " + backend);
      System.exit(2);
    }
    MachineInfo machine = MachineInfo.current();
    System.err.println("machine: " + machine.describe());
    if (reads) {
      writeReads(out, backend, machine, reps);
      return;
    }
    List<JmhSuite.Figure> jmh = skipJmh ? List.of() : JmhSuite.run(quick);
    HarnessSettings defaults = HarnessSettings.defaults();
    List<Scenario> scenarios =
        quick ? List.of(new Scenario(2, 1, 0, 1), new Scenario(5, 1, 0, 1)) : defaults.scenarios();
    if (!only.isEmpty()) {
      scenarios =
          scenarios.stream().filter(s -> only.stream().anyMatch(spec -> matches(s, spec))).toList();
    }
    HarnessSettings settings =
        new HarnessSettings(
            defaults.hold(),
            quick ? 1 : reps,
            backoffScale,
            defaults.retryTimeout(),
            defaults.runTimeout(),
            quick ? 500 : defaults.warmupRequests(),
            scenarios);
    List<Algorithm> algorithms = Algorithms.all();
    if (!algorithmKeys.isEmpty()) {
      algorithms =
          Algorithms.selectable().stream().filter(a -> algorithmKeys.contains(a.key())).toList();
    }
    ConvergenceResults results;
    if (backend.equals("real")) {
      try (RealApiServer real = RealApiServer.start();
          ConvergenceHarness harness =
              new ConvergenceHarness(settings, algorithms, System.err, real)) {
        System.err.println(
            "backend: real kube-apiserver " + real.kubernetesVersion() + " at " + real.url());
        results = harness.run();
      }
    } else {
      try (ConvergenceHarness harness = new ConvergenceHarness(settings, algorithms, System.err)) {
        results = harness.run();
      }
    }
    String command =
        "java -jar tools/hami-lock-benchmarks/target/hami-lock-benchmarks.jar"
            + (args.length == 0 ? "" : " " + String.join(" ", args));
    ReportWriter.write(out, machine, results, jmh, command, !quick);
    System.err.println("wrote " + out.toAbsolutePath());
    for (Goal g : Goals.evaluate(results, jmh)) {
      System.err.println(
          "goal: "
              + g.name()
              + " "
              + g.target()
              + ": "
              + g.measured()
              + " -> "
              + (quick ? "not judged (--quick)" : g.verdict()));
    }
  }

  /** The {@code --reads} run: {@code 5 × reps} samples per case (25 by default). */
  private static void writeReads(Path out, String backend, MachineInfo machine, int reps)
      throws Exception {
    try (KubeBackend k8s =
        backend.equals("real")
            ? RealApiServer.start()
            : ApiServerEmulator.builder().servingDra(true).start()) {
      String table = ConsistentReadLatency.table(ConsistentReadLatency.measure(k8s, 5 * reps));
      String text =
          "# A bind's re-fit reads right after a write\n\nBackend: %s. Machine: %s.\n\n%s"
              .formatted(
                  backend.equals("real")
                      ? "kube-apiserver " + ((RealApiServer) k8s).kubernetesVersion()
                      : "emulator",
                  machine.describe(),
                  table);
      Files.createDirectories(out);
      Files.writeString(out.resolve("consistent-reads.md"), text);
      System.out.print(text);
    }
  }

  /**
   * @return whether {@code s} matches every {@code key=value} of {@code spec} (keys N, nodes,
   *     latency, replicas)
   * @throws IllegalArgumentException naming the spec if a key is unknown or a value not a number
   */
  static boolean matches(Scenario s, String spec) {
    for (String part : spec.split(",")) {
      String[] kv = part.trim().split("=", 2);
      if (kv.length != 2) {
        throw new IllegalArgumentException("--only expects key=value pairs, got " + spec);
      }
      int v = Integer.parseInt(kv[1].trim());
      int actual =
          switch (kv[0].trim()) {
            case "N" -> s.gangSize();
            case "nodes" -> s.nodes();
            case "latency" -> s.latencyMs();
            case "replicas" -> s.replicas();
            default ->
                throw new IllegalArgumentException("--only: unknown key " + kv[0] + " in " + spec);
          };
      if (actual != v) {
        return false;
      }
    }
    return true;
  }

  private static String value(String[] args, int i) {
    if (i >= args.length) {
      throw new IllegalArgumentException("option " + args[i - 1] + " needs a value");
    }
    return args[i];
  }
}
