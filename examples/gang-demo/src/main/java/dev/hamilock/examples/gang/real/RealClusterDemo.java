package dev.hamilock.examples.gang.real;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * {@code gang-demo --real-cluster}: the scenarios of {@link Scenario#ALL} on a real control plane
 * with the real kube-scheduler calling the runnable extender ({@link RealSchedulerCluster}), each
 * run with the gang retry and fail-fast, verified, and printed as one table; on request ({@code
 * --scenario preemption}) also {@link PreemptionScenario}, printed after it. Needs {@code
 * testing/realcluster/bin/realcluster} (built by {@code testing/realcluster/build}, Go) and {@code
 * examples/extender/target/hami-extender.jar}.
 */
public final class RealClusterDemo {
  /** The usage text. */
  public static final String USAGE =
      String.join(
          "\n",
          "Usage: java -jar examples/gang-demo/target/gang-demo.jar --real-cluster [options]",
          "",
          "Runs the guide's set-up on a real control plane: kube-apiserver + etcd + kube-scheduler v1.37.2",
          "(testing/realcluster, needs Go to build) with the runnable extender (examples/extender) as its",
          "filter/bind extender, started twice: --node-lock-retry-timeout=28s (gang retry) and =0 (fail-fast,",
          "the scheduler's real backoff). Gangs are released together by kube-scheduler 1.37's gang scheduling.",
          "Each scenario runs once per mode (--rounds) after one unreported warm-up run per mode; prints one table.",
          "The floor: after each gang-retry run the same scenario runs with kube-scheduler alone (no extender, no",
          "lock; the GPU an ordinary extended resource, each pod pinned by node affinity to the node the gang-retry",
          "run chose, the kubelet marking it Running 20 ms after it is bound); floor = its time to all Running +",
          "(pods on the busiest node - 1) x 20 ms, and each mode is reported as its median / the floor's median.",
          "",
          "Options:",
          "  --scenario NAME[,NAME]  guide (gang of 4 on 2 nodes), sixteen (gang of 16 on 1 node), mixed",
          "                          (gang of 4 + 4 plain pods on 2 nodes); default all three; also",
          "                          preemption (HAMi#1527: a high-priority pod short of GPU memory, through",
          "                          the extender without and with --gpu-preemption; not in the default)",
          "  --extender-jar PATH     the runnable extender (default examples/extender/target/hami-extender.jar",
          "                          under the repository root)",
          "  --work-dir DIR          where the scheduler configuration and extender logs go (default a new",
          "                          temporary directory)",
          "  --scheduler-plugins BIN the guide's scheduler instead: testing/schedplugins/bin/kube-scheduler",
          "                          (v1.34.7 + scheduler-plugins v0.34.7 Coscheduling, the guide's profile, its",
          "                          own process) against the same v1.37.2 API server -- outside the version-skew",
          "                          policy, an experiment (testing/realcluster/SCHEDULER.md)",
          "  --podgroup-crd FILE     with --scheduler-plugins: the PodGroup CRD (default scheduler-plugins",
          "                          v0.34.7's manifests/coscheduling/crd.yaml in Go's module cache)",
          "  --rounds N              run each scenario N times per extender, alternating (default 1); the",
          "                          comparison then uses the medians",
          "  --floor NAME[,NAME]|none  the scenarios that also run the floor in every round (default all)",
          "  --chart FILE            also write an SVG chart of the medians (time to all Running per",
          "                          scenario: gang retry, fail-fast, floor)",
          "  --help                  this text",
          "",
          "Exit codes: 0 every run verified, 1 bad option or missing jar, 2 a run failed its verification"
              + " or the control plane did not start (e.g. no testing/realcluster/bin/realcluster).");

  /**
   * What {@code --real-cluster} did.
   *
   * @param exitCode 0, 1 or 2 as {@link #USAGE} says
   * @param runs the reported runs of the gang scenarios, in order
   * @param preemptions the runs of {@link PreemptionScenario}, in order
   * @param errors what went wrong
   */
  public record Report(
      int exitCode, List<ScenarioRun> runs, List<PreemptionRun> preemptions, List<String> errors) {
    /** Copies. */
    public Report {
      runs = List.copyOf(runs);
      preemptions = List.copyOf(preemptions);
      errors = List.copyOf(errors);
    }
  }

  private RealClusterDemo() {}

  /**
   * Runs {@code --real-cluster}.
   *
   * @param args the command line, {@code --real-cluster} included
   * @param out where the table goes
   * @param err where errors go
   * @return the report
   */
  public static Report run(List<String> args, PrintStream out, PrintStream err) {
    List<Scenario> scenarios = Scenario.ALL;
    boolean preemption = false;
    Optional<Path> jar = Optional.empty();
    Optional<Path> workDir = Optional.empty();
    Optional<Path> schedulerPlugins = Optional.empty();
    Optional<Path> crd = Optional.empty();
    Optional<List<Scenario>> floor = Optional.empty();
    Optional<Path> chart = Optional.empty();
    int rounds = 1;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      String name = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
      String inline = a.contains("=") ? a.substring(a.indexOf('=') + 1) : null;
      switch (name) {
        case "--real-cluster" -> {}
        case "--help", "-h" -> {
          out.println(USAGE);
          return new Report(0, List.of(), List.of(), List.of());
        }
        case "--scenario",
            "--extender-jar",
            "--work-dir",
            "--scheduler-plugins",
            "--podgroup-crd",
            "--floor",
            "--chart",
            "--rounds" -> {
          String value = inline != null ? inline : i + 1 < args.size() ? args.get(++i) : null;
          if (value == null || value.isBlank()) {
            return usage(err, name + " needs a value");
          }
          if (name.equals("--scenario") || name.equals("--floor")) {
            List<Scenario> chosen = new ArrayList<>();
            boolean scenario = name.equals("--scenario");
            preemption &= !scenario; // the last --scenario says
            for (String s :
                name.equals("--floor") && value.equals("none") ? new String[0] : value.split(",")) {
              if (scenario && s.trim().equals(PreemptionScenario.NAME)) {
                preemption = true;
                continue;
              }
              Optional<Scenario> found =
                  Scenario.ALL.stream().filter(x -> x.name().equals(s.trim())).findFirst();
              if (found.isEmpty()) {
                return usage(
                    err,
                    name
                        + " "
                        + s
                        + ": unknown (known: "
                        + Scenario.ALL.stream()
                            .map(Scenario::name)
                            .collect(Collectors.joining(", "))
                        + (scenario ? ", " + PreemptionScenario.NAME : ", or none")
                        + ")");
              }
              chosen.add(found.get());
            }
            if (name.equals("--floor")) {
              floor = Optional.of(chosen);
            } else {
              scenarios = chosen;
            }
          } else if (name.equals("--chart")) {
            chart = Optional.of(Path.of(value));
          } else if (name.equals("--extender-jar")) {
            jar = Optional.of(Path.of(value));
          } else if (name.equals("--scheduler-plugins")) {
            schedulerPlugins = Optional.of(Path.of(value));
          } else if (name.equals("--rounds")) {
            try {
              rounds = Integer.parseInt(value);
            } catch (NumberFormatException e) {
              rounds = -1;
            }
            if (rounds < 1 || rounds > 10) {
              return usage(err, "--rounds " + value + ": must be a whole number from 1 to 10");
            }
          } else if (name.equals("--podgroup-crd")) {
            crd = Optional.of(Path.of(value));
          } else {
            workDir = Optional.of(Path.of(value));
          }
        }
        default -> {
          return usage(err, "unknown option " + a + " with --real-cluster");
        }
      }
    }
    if (preemption && schedulerPlugins.isPresent()) { // its statuses are v1.37.2's
      return usage(err, "--scenario preemption runs without --scheduler-plugins only");
    }
    List<Scenario> floorScenarios = floor.orElse(scenarios);
    Path extenderJar =
        jar.orElseGet(() -> repositoryRoot().resolve("examples/extender/target/hami-extender.jar"));
    List<ScenarioRun> runs = new ArrayList<>();
    List<PreemptionRun> preemptions = new ArrayList<>();
    List<String> errors = new ArrayList<>();
    try {
      Path dir = workDir.isPresent() ? workDir.get() : Files.createTempDirectory("gang-demo-real-");
      if (schedulerPlugins.isPresent()) {
        out.println(
            "starting kube-apiserver + etcd (testing/realcluster), the guide's kube-scheduler "
                + schedulerPlugins.get()
                + " (Coscheduling; outside the version-skew policy) and two extender processes ...");
      } else {
        out.println(
            "starting kube-apiserver + etcd + kube-scheduler (testing/realcluster) and two extender processes ...");
      }
      try (RealSchedulerCluster cluster =
          schedulerPlugins.isPresent()
              ? RealSchedulerCluster.startWithCoscheduling(
                  extenderJar,
                  dir,
                  schedulerPlugins.get(),
                  crd.isPresent() ? crd.get() : defaultPodGroupCrd())
              : RealSchedulerCluster.start(extenderJar, dir)) {
        out.println(
            "control plane "
                + cluster.apiServer().kubernetesVersion()
                + " ready; scenarios: "
                + java.util.stream.Stream.concat(
                        scenarios.stream().map(Scenario::name),
                        preemption
                            ? java.util.stream.Stream.of(PreemptionScenario.NAME)
                            : java.util.stream.Stream.empty())
                    .collect(Collectors.joining(", "))
                + " (logs in "
                + dir
                + ")");
        // warm-up: first cycles and JIT, not reported (the floor starts no process of its own: it
        // runs on the kube-scheduler and harness these warm)
        for (ExtenderMode mode :
            scenarios.isEmpty() ? List.<ExtenderMode>of() : ExtenderMode.withExtender()) {
          ScenarioRun warm = cluster.run(Scenario.GUIDE, mode);
          if (!warm.ok()) {
            errors.add(
                "warm-up "
                    + mode.label()
                    + ": "
                    + warm.violations()
                    + " locks left "
                    + warm.locksLeft());
          }
        }
        for (Scenario s : scenarios) {
          for (int round = 0;
              round < rounds;
              round++) { // alternated, so drift in machine load hits both
            Map<String, String> pins = Map.of();
            for (ExtenderMode mode : ExtenderMode.withExtender()) {
              ScenarioRun r = cluster.run(s, mode);
              runs.add(r);
              check(r, errors);
              if (mode == ExtenderMode.GANG_RETRY) {
                pins = r.nodes();
              }
            }
            if (floorScenarios.contains(s)) {
              if (pins.containsValue("-")) {
                errors.add(s.name() + " floor: not run, the gang-retry run left a pod unbound");
              } else {
                ScenarioRun r = cluster.runFloor(s, pins);
                runs.add(r);
                check(r, errors);
              }
            }
          }
        }
        for (int round = 0; preemption && round < rounds; round++) {
          PreemptionRun r = PreemptionScenario.run(cluster);
          preemptions.add(r);
          if (!r.ok()) {
            errors.add(PreemptionScenario.NAME + ": " + r.violations());
          }
        }
      }
    } catch (IllegalStateException e) {
      err.println("error: " + e.getMessage());
      return new Report(1, runs, preemptions, List.of(e.getMessage()));
    } catch (Exception e) {
      err.println("error: the real-cluster run failed: " + e);
      return new Report(2, runs, preemptions, List.of("the real-cluster run failed: " + e));
    }
    if (!runs.isEmpty()) {
      print(runs, out);
    }
    preemptions.forEach(r -> print(r, out));
    if (chart.isPresent()) {
      try {
        Files.writeString(
            chart.get(),
            dev.hamilock.examples.gang.report.RealSchedulerChart.render(runs, chartTitle()));
        out.println("chart: " + chart.get());
      } catch (java.io.IOException e) {
        errors.add("cannot write the chart " + chart.get() + ": " + e.getMessage());
      }
    }
    errors.forEach(e -> out.println("error: " + e));
    return new Report(errors.isEmpty() ? 0 : 2, runs, preemptions, errors);
  }

  private static void check(ScenarioRun r, List<String> errors) {
    if (!r.ok()) {
      errors.add(
          r.scenario()
              + " "
              + r.mode().label()
              + ": "
              + r.violations()
              + " locks left "
              + r.locksLeft());
    }
  }

  /**
   * @param runs at least one run
   * @return the median time to all Running in ms (the lower middle one for an even count)
   */
  public static long median(List<ScenarioRun> runs) {
    return median(runs, ScenarioRun::runningMs);
  }

  /**
   * @param runs at least one run
   * @param time what to take the median of, in ms
   * @return the median of {@code time} over the runs (the lower middle one for an even count)
   */
  public static long median(
      List<ScenarioRun> runs, java.util.function.ToLongFunction<ScenarioRun> time) {
    long[] t = runs.stream().mapToLong(time).sorted().toArray();
    return t[(t.length - 1) / 2];
  }

  private static String chartTitle() {
    return "Real scheduler: time to all Running, median ("
        + java.time.LocalDate.now(java.time.ZoneOffset.UTC)
        + ", "
        + Runtime.getRuntime().availableProcessors()
        + " cores)";
  }

  /**
   * @param runs runs of any scenarios and modes
   * @param s the scenario
   * @param mode the mode
   * @return the runs of one scenario in one mode, in order
   */
  public static List<ScenarioRun> runs(List<ScenarioRun> runs, Scenario s, ExtenderMode mode) {
    return runs.stream().filter(r -> r.scenario().equals(s.name()) && r.mode() == mode).toList();
  }

  private static Report usage(PrintStream err, String message) {
    err.println("error: " + message);
    err.println("(run with --real-cluster --help for the options)");
    return new Report(1, List.of(), List.of(), List.of(message));
  }

  /**
   * Prints the table: per scenario and mode, time to all bound and all Running, kube-scheduler's
   * extender calls, node lock requests per pod from the API server's metrics, placement, verdict.
   *
   * @param runs the runs
   * @param out where
   */
  public static void print(List<ScenarioRun> runs, PrintStream out) {
    out.println();
    out.println(
        String.format(
            Locale.ROOT,
            "%-8s %-11s %4s %9s %9s %11s %8s %8s %6s %10s %8s %5s  %-22s %s",
            "scenario",
            "extender",
            "pods",
            "1st bound",
            "all bound",
            "Running ms",
            "hand-off",
            "/filter",
            "/bind",
            "PATCH/pod",
            "GET/pod",
            "load",
            "placement",
            "verified"));
    for (ScenarioRun r : runs) {
      out.println(
          String.format(
              Locale.ROOT,
              "%-8s %-11s %4d %9s %9s %11s %8s %8d %6d %10.2f %8.2f %5.1f  %-22s %s",
              r.scenario(),
              r.mode().label(),
              r.pods(),
              r.firstBoundMs() < 0 ? "-" : Long.toString(r.firstBoundMs()),
              r.boundMs() < 0 ? "-" : Long.toString(r.boundMs()),
              r.runningMs() < 0 ? "-" : Long.toString(r.runningMs()),
              r.handoffMs() < 0 ? "-" : Long.toString(r.handoffMs()),
              r.extenderCalls().getOrDefault("/filter", 0L),
              r.extenderCalls().getOrDefault("/bind", 0L),
              r.patchesPerPod(),
              r.getsPerPod(),
              r.loadAverage(),
              r.placement().toString(),
              r.ok() ? "ok" : "FAILED"));
    }
    for (Scenario s : Scenario.ALL) {
      List<ScenarioRun> g = runs(runs, s, ExtenderMode.GANG_RETRY);
      List<ScenarioRun> f = runs(runs, s, ExtenderMode.FAIL_FAST);
      List<ScenarioRun> floor = runs(runs, s, ExtenderMode.FLOOR);
      if (g.isEmpty() || f.isEmpty()) {
        continue;
      }
      if (!g.stream().allMatch(ScenarioRun::ok)
          || !f.stream().allMatch(ScenarioRun::ok)
          || !floor.stream().allMatch(ScenarioRun::ok)) {
        out.println(s.name() + ": " + s.title() + "; no comparison: a run failed");
        continue;
      }
      long gm = median(g);
      long fm = median(f);
      double ratio = (double) fm / Math.max(1, gm);
      out.println(
          String.format(
              Locale.ROOT,
              "%s: %s; gang retry %s (%s%d vs %d ms to all Running, %.1fx)",
              s.name(),
              s.title(),
              ratio >= 1 ? "faster" : "slower",
              g.size() > 1 ? "median of " + g.size() + ": " : "",
              gm,
              fm,
              ratio >= 1 ? ratio : 1 / ratio));
      if (!floor.isEmpty()) {
        long fl = median(floor, ScenarioRun::floorMs);
        out.println(
            String.format(
                Locale.ROOT,
                "%s: floor %d ms (kube-scheduler alone: %s%d ms, + (%d pods on the busiest node - 1)"
                    + " x %d ms hold); gang retry %.2fx the floor, fail-fast %.2fx",
                s.name(),
                fl,
                floor.size() > 1 ? "median of " + floor.size() + " " : "",
                median(floor),
                floor.get(0).busiestNodePods(),
                RealSchedulerCluster.ALLOCATE_MS,
                (double) gm / Math.max(1, fl),
                (double) fm / Math.max(1, fl)));
      }
    }
    out.println(
        "Times in ms from creating the first pod: to the first pod bound (for a gang, about when it left "
            + "Permit), to all bound, to all Running (handed off by the device plugins).");
    out.println(
        "load: the machine's 1-minute load average when the run started (uptime's first figure).");
    out.println(
        "PATCH/pod and GET/pod: node requests in the API server's apiserver_request_total during the run "
            + "(lock acquire and release by the extender and the device plugins), per pod; /filter and /bind: "
            + "kube-scheduler's HTTP calls to the extender.");
  }

  /**
   * Prints a run of {@link PreemptionScenario}: kube-scheduler's status without the flag; with it
   * the victims, the time until the preemptor Runs, the API requests and kube-scheduler's extender
   * calls; the verdict.
   *
   * @param r the run
   * @param out where
   */
  public static void print(PreemptionRun r, PrintStream out) {
    out.println();
    out.println(
        String.format(
            Locale.ROOT,
            "preemption (HAMi#1527): one A40 (46068 MiB) holds %s pods of %s MiB, the last protected by"
                + " a PodDisruptionBudget; a %s pod asks for 15000 MiB; load %.1f",
            PreemptionScenario.LOW,
            PreemptionScenario.LOW_PODS.stream()
                .map(p -> p.getValue().toString())
                .collect(Collectors.joining(" + ")),
            PreemptionScenario.HIGH,
            r.loadAverage()));
    out.println("  without --gpu-preemption: Pending; kube-scheduler: " + r.pendingStatus());
    out.println(
        "  with --gpu-preemption:    victims "
            + r.victims()
            + "; preemptor Running "
            + (r.runningMs() < 0 ? "-" : Long.toString(r.runningMs()))
            + " ms after its creation");
    out.println(
        String.format(
            Locale.ROOT,
            "  requests with it: %d pods/eviction (refused ones included), %d pod PATCH, %d Event"
                + " creates; kube-scheduler's calls: /filter %d, /bind %d",
            r.evictions(),
            r.podPatches(),
            r.events(),
            r.extenderCalls().getOrDefault("/filter", 0L),
            r.extenderCalls().getOrDefault("/bind", 0L)));
    out.println(
        String.format(
            Locale.ROOT,
            "  gang (flag on, node-q: one A40 holding %s pods of %s MiB): a gang of 2 %s members of"
                + " %d MiB",
            PreemptionScenario.LOW,
            PreemptionScenario.GANG_LOW_PODS.stream()
                .map(p -> p.getValue().toString())
                .collect(Collectors.joining(" + ")),
            PreemptionScenario.HIGH,
            PreemptionScenario.GANG_MEMBER_MIB));
    out.println("    pending: kube-scheduler: " + r.gangPendingStatus());
    out.println(
        "    victims "
            + r.gangVictims()
            + "; both members Running "
            + (r.gangRunningMs() < 0 ? "-" : Long.toString(r.gangRunningMs()))
            + " ms after the PodGroup's creation; "
            + r.gangEvictions()
            + " pods/eviction");
    out.println(
        "  verified: "
            + (r.ok()
                ? "ok (nothing evicted without the flag; with it exactly the planned victims, the"
                    + " protected pod kept, the preemptor bound through the extender, no card"
                    + " over-committed, a "
                    + PreemptionScenario.LOW
                    + " pod created after the first eviction not bound; for the gang exactly the"
                    + " planned victims, both members bound through the extender)"
                : "FAILED " + r.violations()));
  }

  /**
   * @return scheduler-plugins v0.34.7's PodGroup CRD in Go's module cache ({@code go env
   *     GOMODCACHE})
   */
  static Path defaultPodGroupCrd() throws java.io.IOException, InterruptedException {
    Process p = new ProcessBuilder("go", "env", "GOMODCACHE").redirectErrorStream(true).start();
    String cache =
        new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
            .trim();
    p.waitFor();
    return Path.of(
        cache, "sigs.k8s.io", "scheduler-plugins@v0.34.7", "manifests", "coscheduling", "crd.yaml");
  }

  /**
   * @return the directory holding {@code testing/realcluster/go.mod}, searched upward from the
   *     working directory
   */
  static Path repositoryRoot() {
    Path p = Path.of("").toAbsolutePath();
    for (Path q = p; q != null; q = q.getParent()) {
      if (Files.isRegularFile(q.resolve("testing/realcluster/go.mod"))) {
        return q;
      }
    }
    return p;
  }
}
