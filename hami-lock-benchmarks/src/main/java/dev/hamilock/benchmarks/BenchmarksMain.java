package dev.hamilock.benchmarks;

import dev.hamilock.benchmarks.convergence.Algorithm;
import dev.hamilock.benchmarks.convergence.Algorithms;
import dev.hamilock.benchmarks.convergence.ConvergenceHarness;
import dev.hamilock.benchmarks.convergence.ConvergenceResults;
import dev.hamilock.benchmarks.convergence.HarnessSettings;
import dev.hamilock.benchmarks.convergence.Scenario;
import dev.hamilock.benchmarks.jmh.JmhSuite;
import dev.hamilock.benchmarks.report.Goal;
import dev.hamilock.benchmarks.report.Goals;
import dev.hamilock.benchmarks.report.MachineInfo;
import dev.hamilock.benchmarks.report.ReportWriter;
import java.nio.file.Path;
import java.util.List;

/**
 * Runs the benchmark suite and writes the report.
 *
 * <pre>
 * java -jar hami-lock-benchmarks/target/hami-lock-benchmarks.jar [options]
 *   --out DIR            output directory (default benchmarks/results)
 *   --reps N             repetitions per scenario and algorithm (default 5)
 *   --backoff-scale S    divisor of kube-scheduler's backoff for baseline (b) (default 10)
 *   --skip-jmh           run only the convergence harness
 *   --quick              a one-minute check: 1 repetition, N ∈ {2, 5} at 0 ms / 1 replica, short JMH
 * </pre>
 *
 * Exit status 0 after writing the report, 2 for a bad option.
 */
public final class BenchmarksMain {

    private BenchmarksMain() {
    }

    /**
     * @param args options (see class doc)
     * @throws Exception if a benchmark fails to run or the report cannot be written
     */
    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
                System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        Path out = Path.of("benchmarks", "results");
        int reps = 5;
        double backoffScale = 10;
        boolean skipJmh = false;
        boolean quick = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(value(args, ++i));
                case "--reps" -> reps = Integer.parseInt(value(args, ++i));
                case "--backoff-scale" -> backoffScale = Double.parseDouble(value(args, ++i));
                case "--skip-jmh" -> skipJmh = true;
                case "--quick" -> quick = true;
                default -> {
                    System.err.println("unknown option " + args[i]
                            + "; options: --out DIR, --reps N, --backoff-scale S, --skip-jmh, --quick");
                    System.exit(2);
                }
            }
        }
        MachineInfo machine = MachineInfo.current();
        System.err.println("machine: " + machine.describe());
        List<JmhSuite.Figure> jmh = skipJmh ? List.of() : JmhSuite.run(quick);
        HarnessSettings defaults = HarnessSettings.defaults();
        HarnessSettings settings = new HarnessSettings(defaults.hold(), quick ? 1 : reps, backoffScale,
                defaults.retryTimeout(), defaults.runTimeout(), quick ? 500 : defaults.warmupRequests(),
                quick ? List.of(new Scenario(2, 1, 0, 1), new Scenario(5, 1, 0, 1)) : defaults.scenarios());
        List<Algorithm> algorithms = Algorithms.all();
        ConvergenceResults results;
        try (ConvergenceHarness harness = new ConvergenceHarness(settings, algorithms, System.err)) {
            results = harness.run();
        }
        String command = "java -jar hami-lock-benchmarks/target/hami-lock-benchmarks.jar" + (args.length == 0 ? ""
                : " " + String.join(" ", args));
        ReportWriter.write(out, machine, results, jmh, command);
        System.err.println("wrote " + out.toAbsolutePath());
        for (Goal g : Goals.evaluate(results, jmh)) {
            System.err.println("goal: " + g.name() + " " + g.target() + ": " + g.measured() + " -> " + g.verdict());
        }
    }

    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException("option " + args[i - 1] + " needs a value");
        }
        return args[i];
    }
}
