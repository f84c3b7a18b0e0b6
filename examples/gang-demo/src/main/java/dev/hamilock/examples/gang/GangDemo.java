package dev.hamilock.examples.gang;

import dev.hamilock.core.GoDuration;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.examples.gang.input.DemoInput;
import dev.hamilock.examples.gang.input.InputChecks;
import dev.hamilock.examples.gang.input.InputException;
import dev.hamilock.examples.gang.input.InputLoader;
import dev.hamilock.examples.gang.real.RealClusterDemo;
import dev.hamilock.examples.gang.report.JsonReport;
import dev.hamilock.examples.gang.report.TextReport;
import dev.hamilock.examples.gang.report.TimelineSvg;
import dev.hamilock.examples.gang.run.Backends;
import dev.hamilock.examples.gang.run.DemoBackend;
import dev.hamilock.examples.gang.run.GangRun;
import dev.hamilock.examples.gang.run.ModeResult;
import dev.hamilock.preflight.check.Finding;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The gang demo (issue 7): the guide's {@code gang-training} PodGroup released by Coscheduling's
 * Permit into hami-lock's bind flow from several scheduler replicas at once, in the embedded
 * Kubernetes API emulator with a simulated HAMi device plugin per node; verified (no overlapping
 * slices, every member bound, no lock left) and compared with fail-fast binding.
 *
 * <p>{@link #main} exits with {@link #EXIT_OK} (0), {@link #EXIT_USER_ERROR} (1: bad option or
 * input, a gang that cannot be bound, no {@code --yes}) or {@link #EXIT_INTERNAL_ERROR} (2: an
 * unexpected failure, or the safety check found a violation). {@link #run} does the same without
 * exiting and returns a {@link DemoResult}.
 */
public final class GangDemo {
  /** Success. */
  public static final int EXIT_OK = 0;

  /** Bad command line or input, a gang that cannot be bound, or a refused real-cluster run. */
  public static final int EXIT_USER_ERROR = 1;

  /** Unexpected failure, or the verification found a violation (a bug). */
  public static final int EXIT_INTERNAL_ERROR = 2;

  private GangDemo() {}

  /**
   * Runs the demo and exits with its exit code.
   *
   * @param args the command line (see {@link DemoOptions#USAGE})
   */
  public static void main(String[] args) {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    PrintStream err = new PrintStream(System.err, true, StandardCharsets.UTF_8);
    int code = run(Arrays.asList(args), out, err).exitCode();
    out.flush();
    System.exit(code);
  }

  /**
   * Runs the demo without exiting.
   *
   * @param args the command line
   * @param out where the report goes (text, or JSON with {@code --json})
   * @param err where errors and warnings go (text mode prints warnings to {@code out} too)
   * @return the result, with the exit code
   */
  public static DemoResult run(List<String> args, PrintStream out, PrintStream err) {
    if (args.contains("--real-cluster")) {
      RealClusterDemo.Report r = RealClusterDemo.run(args, out, err);
      return new DemoResult(
          r.exitCode(),
          "--real-cluster: " + (r.runs().size() + r.preemptions().size()) + " run(s)",
          List.of(),
          r.errors(),
          Optional.empty(),
          Optional.empty(),
          List.of());
    }
    DemoOptions options;
    try {
      options = DemoOptions.parse(args);
    } catch (DemoOptions.UsageException e) {
      err.println("error: " + e.getMessage());
      err.println("(run with --help for the options)");
      return failed(EXIT_USER_ERROR, "", List.of(), e.getMessage());
    }
    if (options.help()) {
      out.println(DemoOptions.USAGE);
      return new DemoResult(
          EXIT_OK, "", List.of(), List.of(), Optional.empty(), Optional.empty(), List.of());
    }
    try {
      DemoResult r = execute(options, out, err);
      if (options.json()) {
        out.println(JsonReport.render(r, options));
      } else {
        TextReport.render(r, options, out);
      }
      if (options.json()) { // the text report shows them already
        for (String e : r.errors()) {
          err.println("error: " + e);
        }
      }
      return r;
    } catch (RuntimeException | Error e) {
      err.println("internal error: " + e);
      e.printStackTrace(err);
      return failed(EXIT_INTERNAL_ERROR, "", List.of(), "internal error: " + e);
    }
  }

  private static DemoResult failed(int code, String summary, List<String> warnings, String error) {
    return new DemoResult(
        code, summary, warnings, List.of(error), Optional.empty(), Optional.empty(), List.of());
  }

  private static DemoResult execute(DemoOptions options, PrintStream out, PrintStream err) {
    VendorRegistry registry = VendorRegistry.discover();
    RetryPolicy gangPolicy;
    try {
      gangPolicy = RetryPolicy.builder().retryTimeout(options.retryTimeout()).build();
    } catch (IllegalArgumentException e) {
      return failed(
          EXIT_USER_ERROR,
          "",
          List.of(),
          "--retry-timeout " + GoDuration.format(options.retryTimeout()) + ": " + e.getMessage());
    }
    DemoInput input;
    InputChecks.Result checks;
    try {
      InputLoader loader = new InputLoader(registry);
      input = options.manifests().isEmpty() ? loader.builtIn() : loader.load(options.manifests());
      checks = new InputChecks(registry).check(input);
    } catch (InputException e) {
      return failed(EXIT_USER_ERROR, "", List.of(), e.getMessage());
    }
    String summary = summary(input, options);
    List<String> warnings = warnings(input, checks);
    List<String> errors = new ArrayList<>(checks.quorum());
    checks
        .unfittable()
        .forEach(
            (pod, reasons) ->
                errors.add(
                    "pod "
                        + pod
                        + " fits on no node: "
                        + reasons.entrySet().stream()
                            .map(e -> e.getKey() + ": " + e.getValue())
                            .collect(Collectors.joining("; "))));
    if (checks.blocksBinding()) {
      return new DemoResult(
          EXIT_USER_ERROR,
          summary,
          warnings,
          errors,
          Optional.empty(),
          Optional.empty(),
          List.of());
    }
    if (options.kubeconfig().isPresent()) {
      return KubeconfigRun.run(options, registry, gangPolicy, input, summary, warnings);
    }
    GangRun runner =
        new GangRun(
            registry,
            new GangRun.Settings(
                options.replicas(), options.allocateMs(), gangPolicy, options.backoffScale(), 6));
    Optional<ModeResult> gang = Optional.empty();
    Optional<ModeResult> failFast = Optional.empty();
    try {
      // one unreported run first, so that neither strategy is charged the JVM's class loading and
      // JIT
      runOne(runner, input, DemoOptions.Mode.GANG, options);
      if (options.mode() != DemoOptions.Mode.FAIL_FAST) {
        gang = Optional.of(runOne(runner, input, DemoOptions.Mode.GANG, options));
      }
      if (options.mode() != DemoOptions.Mode.GANG) {
        failFast = Optional.of(runOne(runner, input, DemoOptions.Mode.FAIL_FAST, options));
      }
    } catch (Exception e) {
      return new DemoResult(
          EXIT_INTERNAL_ERROR,
          summary,
          warnings,
          List.of("the run failed: " + e),
          gang,
          failFast,
          List.of());
    }
    int code = EXIT_OK;
    for (ModeResult m :
        java.util.stream.Stream.of(gang, failFast).flatMap(Optional::stream).toList()) {
      if (!m.violations().isEmpty() || !m.locksLeft().isEmpty()) {
        errors.add(
            m.mode().flag()
                + " run: the verification failed: "
                + String.join("; ", m.violations())
                + (m.locksLeft().isEmpty() ? "" : " locks left held: " + m.locksLeft()));
        code = EXIT_INTERNAL_ERROR;
      } else if (!m.allBound()) {
        errors.add(
            m.mode().flag()
                + " run: not every pod was bound: "
                + m.members().stream()
                    .filter(x -> !x.bound())
                    .map(x -> x.pod() + " " + x.result() + " (" + x.reason() + ")")
                    .collect(Collectors.joining("; ")));
        code = Math.max(code, EXIT_USER_ERROR);
      }
    }
    if (options.timeline().isPresent()) {
      try {
        Files.writeString(
            options.timeline().get(),
            TimelineSvg.render(
                java.util.stream.Stream.of(gang, failFast).flatMap(Optional::stream).toList()),
            StandardCharsets.UTF_8);
      } catch (IOException e) {
        errors.add("cannot write the timeline " + options.timeline().get() + ": " + e.getMessage());
        code = Math.max(code, EXIT_USER_ERROR);
      }
    }
    return new DemoResult(code, summary, warnings, errors, gang, failFast, List.of());
  }

  private static ModeResult runOne(
      GangRun runner, DemoInput input, DemoOptions.Mode mode, DemoOptions options)
      throws Exception {
    try (DemoBackend backend = Backends.create(options.inMemory(), runner.registry())) {
      return runner.run(input, mode, backend);
    }
  }

  static String summary(DemoInput input, DemoOptions options) {
    StringBuilder b = new StringBuilder();
    b.append(input.pods().size()).append(" pod(s)");
    input
        .podGroups()
        .forEach(
            g ->
                b.append(", PodGroup ")
                    .append(g.namespace())
                    .append('/')
                    .append(g.name())
                    .append(" (minMember ")
                    .append(g.minMember())
                    .append(", ")
                    .append(input.members(g).size())
                    .append(" labelled)"));
    b.append(", node(s) ")
        .append(input.nodes().stream().map(n -> n.view().name()).collect(Collectors.joining(", ")));
    b.append(" from ").append(String.join(", ", input.sources()));
    b.append("; ")
        .append(options.replicas())
        .append(" scheduler replica(s), Allocate ")
        .append(options.allocateMs())
        .append(" ms, gang retry timeout ")
        .append(GoDuration.format(options.retryTimeout()));
    if (options.backoffScale() != 1.0) {
      b.append(", backoff x").append(options.backoffScale());
    }
    return b.toString();
  }

  static List<String> warnings(DemoInput input, InputChecks.Result checks) {
    List<String> out = new ArrayList<>(input.notes());
    for (Map.Entry<String, List<String>> e : checks.notGangMembers().entrySet()) {
      String min =
          input.podGroups().stream()
              .filter(g -> g.name().equals(e.getKey()))
              .findFirst()
              .map(g -> " " + g.minMember())
              .orElse("");
      out.add(
          "pods "
              + String.join(", ", e.getValue())
              + " name PodGroup \""
              + e.getKey()
              + "\" under metadata.annotations, not metadata.labels: they are NOT gang members and will schedule one by "
              + "one regardless of minMember"
              + min
              + " (Coscheduling and HAMi read only the label; move "
              + DemoInput.PodEntry.POD_GROUP_LABEL
              + " to metadata.labels)");
    }
    for (Finding f : checks.findings()) {
      if (f.checkId().equals("PF05") || f.checkId().equals("PF06")) {
        continue; // reported above in the demo's own words (PF05) or as the quorum error (PF06)
      }
      String head =
          f.checkId().equals("PF09")
              ? "libvgpu.so (glibc) cannot load in a musl-based image (libdl.so.2: cannot open shared object file): "
              : "";
      out.add(
          head
              + f.message()
              + " Fix: "
              + f.fix()
              + " (preflight "
              + f.checkId()
              + " "
              + f.checkName()
              + ", "
              + f.severity()
              + ", at "
              + f.location().describe()
              + ")");
    }
    return out;
  }
}
