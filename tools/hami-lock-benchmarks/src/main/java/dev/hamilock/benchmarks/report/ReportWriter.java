package dev.hamilock.benchmarks.report;

import dev.hamilock.benchmarks.convergence.ConvergenceResults;
import dev.hamilock.benchmarks.convergence.HarnessSettings;
import dev.hamilock.benchmarks.convergence.Scenario;
import dev.hamilock.benchmarks.convergence.ScenarioSummary;
import dev.hamilock.benchmarks.convergence.UncontendedCost;
import dev.hamilock.benchmarks.jmh.JmhSuite;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Writes {@code results.md} (Markdown tables), {@code results.csv} (one row per scenario and
 * algorithm), {@code jmh.csv} and {@code convergence.svg} into a directory.
 */
public final class ReportWriter {

  /** File names written. */
  public static final String MARKDOWN = "results.md";

  /** Convergence CSV. */
  public static final String CSV = "results.csv";

  /** JMH CSV. */
  public static final String JMH_CSV = "jmh.csv";

  /** Chart. */
  public static final String SVG = "convergence.svg";

  /** Header of {@link #CSV}. */
  public static final String CSV_HEADER =
      "gang_size,nodes,latency_ms,replicas,algorithm,ours,reps_converged,"
          + "reps_failed,median_ms,p90_ms,min_ms,max_ms,lower_bound_ms,ratio_to_lower_bound,lock_requests_per_member,"
          + "gets_per_member,patches_per_member,bindings_per_member,watches_per_run,plugin_lookups_per_member,"
          + "exclusion_violations,times_ms,"
          + "requests_by_verb_per_run";

  private ReportWriter() {}

  /**
   * Writes all files, creating the directory if needed; {@code judged} false (a {@code --quick}
   * run) reports the goals' figures without a verdict.
   *
   * @param machine where the run came from
   * @param jmh JMH figures (may be empty when JMH was not run)
   * @param command the command that produced the run (quoted in the report)
   * @param judged whether the goals' verdicts are written
   * @throws IOException if a file cannot be written
   */
  public static void write(
      Path dir,
      MachineInfo machine,
      ConvergenceResults results,
      List<JmhSuite.Figure> jmh,
      String command,
      boolean judged)
      throws IOException {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(CSV), csv(results), StandardCharsets.UTF_8);
    Files.writeString(dir.resolve(JMH_CSV), jmhCsv(jmh), StandardCharsets.UTF_8);
    Files.writeString(
        dir.resolve(SVG),
        SvgChart.render(
            results,
            "Gang convergence vs N (machine-dependent; "
                + machine.cores()
                + " cores, "
                + machine.date()
                + "; (b) backoff ÷"
                + num(results.settings().backoffScale())
                + ")"),
        StandardCharsets.UTF_8);
    Files.writeString(
        dir.resolve(MARKDOWN),
        markdown(machine, results, jmh, command, judged),
        StandardCharsets.UTF_8);
  }

  /**
   * @return the CSV text with {@link #CSV_HEADER}
   */
  public static String csv(ConvergenceResults results) {
    StringBuilder b = new StringBuilder(CSV_HEADER).append('\n');
    for (ScenarioSummary s : results.summaries()) {
      Scenario sc = s.scenario();
      String verbs =
          s.requestsByVerb().entrySet().stream()
              .map(e -> e.getKey() + "=" + num(e.getValue()))
              .collect(Collectors.joining(";"));
      b.append(
          String.format(
              Locale.ROOT,
              "%d,%d,%d,%d,%s,%b,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%s,%s%n",
              sc.gangSize(),
              sc.nodes(),
              sc.latencyMs(),
              sc.replicas(),
              s.algorithmKey(),
              s.ours(),
              s.timesMs().size(),
              s.failedRuns(),
              num(s.medianMs()),
              num(s.p90Ms()),
              num(s.minMs()),
              num(s.maxMs()),
              num(s.lowerBoundMs()),
              num(s.ratioToLowerBound()),
              num(s.lockRequestsPerMember()),
              num(s.getsPerMember()),
              num(s.patchesPerMember()),
              num(s.bindingsPerMember()),
              num(s.watchesPerRun()),
              num(s.pluginLookupsPerMember()),
              s.exclusionViolations(),
              s.timesMs().stream().map(ReportWriter::num).collect(Collectors.joining(";")),
              verbs));
    }
    return b.toString();
  }

  /**
   * @return CSV: benchmark, score, error, unit, alloc bytes/op, alloc MB/s
   */
  public static String jmhCsv(List<JmhSuite.Figure> jmh) {
    StringBuilder b =
        new StringBuilder("benchmark,score,error,unit,alloc_bytes_per_op,alloc_mb_per_s\n");
    for (JmhSuite.Figure f : jmh) {
      b.append(
          String.format(
              Locale.ROOT,
              "%s,%s,%s,%s,%s,%s%n",
              f.benchmark(),
              num(f.score()),
              num(f.error()),
              f.unit(),
              num(f.allocBytesPerOp()),
              num(f.allocMbPerSecond())));
    }
    return b.toString();
  }

  static String markdown(
      MachineInfo machine,
      ConvergenceResults results,
      List<JmhSuite.Figure> jmh,
      String command,
      boolean judged) {
    HarnessSettings st = results.settings();
    StringBuilder b = new StringBuilder();
    b.append("# hami-lock benchmark results\n\n");
    b.append("- Date: ").append(machine.date()).append('\n');
    b.append("- Machine: ")
        .append(machine.describe())
        .append(
            String.format(
                Locale.ROOT,
                "; load average %.2f at the end (other processes shared the cores when it is above ~1)%n",
                java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                    .getSystemLoadAverage()));
    b.append("- Command: `").append(command).append("`\n");
    b.append(
        String.format(
            Locale.ROOT,
            "- Settings: plugin Allocate hold %d ms; %d repetitions per scenario and "
                + "algorithm; warm-up ≥ %d API requests per algorithm plus one discarded gang run; gang retry timeout "
                + "%d s; kube-scheduler backoff of (b) divided by %s (1 s → %s ms, cap 10 s → %s ms).%n",
            st.hold().toMillis(),
            st.repetitions(),
            st.warmupRequests(),
            st.retryTimeout().toSeconds(),
            num(st.backoffScale()),
            num(1000 / st.backoffScale()),
            num(10000 / st.backoffScale())));
    b.append(
        "\nAbsolute times are machine-dependent (in-process API emulator over loopback, ~0.35 ms per request "
            + "on a 2-core machine, see kube-api-notes §3); the ratios (to the lower bound N × hold, and between "
            + "algorithms) and the request counts are the headline. Times are medians over the repetitions with "
            + "p90 and min–max as spread.\n\n");

    b.append(
        "## Goals (issue 8)\n\n| goal | target | measured (latency 0 ms, 1 replica) | verdict |\n|---|---|---|---|\n");
    for (Goal g : Goals.evaluate(results, jmh)) {
      b.append("| ")
          .append(g.name())
          .append(" | ")
          .append(g.target())
          .append(" | ")
          .append(g.measured())
          .append(" | ")
          .append(judged ? g.verdict() : "not judged (--quick)")
          .append(" |\n");
    }

    Map<String, String> labels = new LinkedHashMap<>();
    results.summaries().forEach(s -> labels.putIfAbsent(s.algorithmKey(), s.algorithmLabel()));
    results.costs().forEach(c -> labels.putIfAbsent(c.algorithmKey(), c.algorithmLabel()));
    b.append("\nAlgorithms: ");
    b.append(labels.values().stream().collect(Collectors.joining("; "))).append(".\n");

    b.append("\n## Speed-up of this library (median time of the baseline ÷ ours)\n\n");
    List<String> ours = labels.keySet().stream().filter(k -> isOurs(results, k)).toList();
    List<String> baselines = labels.keySet().stream().filter(k -> !isOurs(results, k)).toList();
    if (ours.isEmpty()) {
      b.append(
          "This library's algorithms were not run (hami-lock-k8s was not available), so there is no "
              + "speed-up to report.\n");
    } else {
      b.append("| scenario | lower bound ms |");
      List<String[]> pairs = new ArrayList<>();
      for (String o : ours) {
        for (String base : baselines) {
          pairs.add(new String[] {o, base});
          b.append(' ').append(o).append(" vs ").append(base).append(" |");
        }
      }
      b.append("\n|---|---|").append("---|".repeat(pairs.size())).append('\n');
      for (Scenario sc : scenarios(results)) {
        b.append("| ")
            .append(sc.describe())
            .append(" | ")
            .append(num(sc.lowerBound(st.hold()).toMillis()))
            .append(" |");
        for (String[] p : pairs) {
          Optional<ScenarioSummary> o = Goals.find(results, p[0], sc);
          Optional<ScenarioSummary> base = Goals.find(results, p[1], sc);
          b.append(' ')
              .append(
                  o.isPresent() && base.isPresent()
                      ? String.format(
                          Locale.ROOT, "%.1f×", base.get().medianMs() / o.get().medianMs())
                      : "—")
              .append(" |");
        }
        b.append('\n');
      }
    }

    b.append(
        "\n## Gang convergence\n\nTime from the gang release to the last member bound and handed off "
            + "(its plugin hold done and the lock released). Lock requests per member = node GETs and PATCHes "
            + "and owner-pod GETs of acquire attempts, waits and the plugin's release (the binding POST, 1 per "
            + "member, and watch streams are not included). Not included either: the device plugin's lookup of "
            + "the pod it serves (HAMi's GetPendingPod: GET the node, parse the lock owner), which every real "
            + "plugin makes whatever the lock algorithm; it is shown apart as \"plugin lookup/member\" (1 GET "
            + "for hami-lock's plugin, which then releases with one compare-and-delete on the value it read; "
            + "not simulated, so 0, for HAMi's plugin, whose release reads the node twice more anyway).\n");
    Set<String> configs = new LinkedHashSet<>();
    for (Scenario sc : scenarios(results)) {
      configs.add(sc.latencyMs() + "/" + sc.replicas());
    }
    for (String c : configs) {
      int latency = Integer.parseInt(c.split("/")[0]);
      int replicas = Integer.parseInt(c.split("/")[1]);
      b.append(
          String.format(
              Locale.ROOT,
              "%n### Latency %d ms, %d scheduler replica%s%n%n",
              latency,
              replicas,
              replicas == 1 ? "" : "s"));
      b.append(
          "| N | nodes | algorithm | median ms | p90 ms | min–max ms | lower bound ms | × bound "
              + "| lock req/member (GET+PATCH) | plugin lookup/member (not counted) | failed runs |\n"
              + "|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (ScenarioSummary s : results.summaries()) {
        Scenario sc = s.scenario();
        if (sc.latencyMs() != latency || sc.replicas() != replicas) {
          continue;
        }
        b.append(
            String.format(
                Locale.ROOT,
                "| %d | %d | %s | %s | %s | %s–%s | %s | %s | %s (%s+%s) | %s | %d |%n",
                sc.gangSize(),
                sc.nodes(),
                s.algorithmKey(),
                f1(s.medianMs()),
                f1(s.p90Ms()),
                f1(s.minMs()),
                f1(s.maxMs()),
                num(s.lowerBoundMs()),
                f2(s.ratioToLowerBound()),
                f2(s.lockRequestsPerMember()),
                f2(s.getsPerMember()),
                f2(s.patchesPerMember()),
                f2(s.pluginLookupsPerMember()),
                s.failedRuns()));
      }
    }

    b.append(
        "\n## Uncontended cost (API requests, latency 0)\n\n| algorithm | acquire | release (same process) "
            + "| acquire + release | release by the device plugin (after its pod lookup) |\n|---|---|---|---|---|\n");
    for (UncontendedCost c : results.costs()) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %s (%s) | %s (%s) | %s | %s (%s) |%n",
              c.algorithmKey(),
              num(c.acquire()),
              c.acquireDetail(),
              num(c.releaseSameProcess()),
              c.releaseDetail(),
              num(c.acquireAndRelease()),
              num(c.releaseByPlugin()),
              c.pluginDetail()));
    }

    b.append("\n## JMH (fit and codecs)\n\n");
    if (jmh.isEmpty()) {
      b.append("JMH was not run in this invocation.\n");
    } else {
      b.append(
          "| benchmark | score | ± (99.9 %) | unit | allocation B/op | allocation MB/s |\n"
              + "|---|---|---|---|---|---|\n");
      for (JmhSuite.Figure f : jmh) {
        b.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %s | %s | %s | %s |%n",
                f.benchmark(),
                sig(f.score()),
                sig(f.error()),
                f.unit(),
                f0(f.allocBytesPerOp()),
                f0(f.allocMbPerSecond())));
      }
      b.append(
          "\nFit: one pod (1 GPU, 3000 MiB, 30 cores) filtered over 5,000 nodes × 8 GPUs and the best "
              + "node picked (node usage precomputed). Registration decode: 8-GPU JSON value, uncached path.\n");
    }

    b.append("\n## Method and caveats\n\n");
    b.append(
        "- All algorithms run against the same in-process API server emulator (hami-lock-testkit) with the "
            + "official client-java; every scheduler replica and the device plugins are separate simulated "
            + "processes (own ApiClient, own in-process state).\n");
    b.append(
        "- (a) is HAMi's algorithm as re-implemented faithfully in hami-reference (`HamiBindLocking`, "
            + "`HamiNodeLock`) with HAMi's defaults: real 100 ms polling, real inner backoff with jitter.\n");
    b.append(
        "- (b) uses HAMi's lock with one attempt; losers are re-queued with kube-scheduler's per-pod backoff "
            + "(1 s doubling to 10 s) on a clock scaled by 1/"
            + num(st.backoffScale())
            + "; with the real clock its times would be larger by roughly that factor for the waiting part.\n");
    b.append(
        "- The device plugin is told its pod in-process and holds the lock "
            + st.hold().toMillis()
            + " ms (its pod lookup included) before releasing it by exact owner. Its pod lookup (HAMi's "
            + "GetPendingPod; for hami-lock's plugin the node GET whose lock value it then releases with) is "
            + "counted apart and not part of the lock counts; the bind flow's pod GET and annotation patches "
            + "(equal for all algorithms) are not simulated.\n");
    b.append(
        "- Mutual exclusion was checked on every run (violations in results.csv must be 0).\n");
    return b.toString();
  }

  private static boolean isOurs(ConvergenceResults results, String key) {
    return results.summaries().stream().anyMatch(s -> s.algorithmKey().equals(key) && s.ours())
        || results.costs().stream().anyMatch(c -> c.algorithmKey().equals(key) && c.ours());
  }

  private static List<Scenario> scenarios(ConvergenceResults results) {
    return results.summaries().stream().map(ScenarioSummary::scenario).distinct().toList();
  }

  static String num(double v) {
    if (Double.isNaN(v)) {
      return "";
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return String.valueOf((long) v);
    }
    return String.format(Locale.ROOT, "%.3f", v);
  }

  private static String f1(double v) {
    return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.1f", v);
  }

  private static String f2(double v) {
    return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.2f", v);
  }

  private static String f0(double v) {
    return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.0f", v);
  }

  private static String sig(double v) {
    if (Double.isNaN(v)) {
      return "—";
    }
    return Math.abs(v) >= 100
        ? String.format(Locale.ROOT, "%.0f", v)
        : Math.abs(v) >= 1
            ? String.format(Locale.ROOT, "%.2f", v)
            : String.format(Locale.ROOT, "%.4f", v);
  }
}
