package dev.hamilock.preflight;

import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * The {@code preflight} command: {@code preflight [--json] FILE...}.
 *
 * <p>Each FILE is a YAML or JSON file (multi-document allowed) or a directory, whose {@code
 * *.yaml}, {@code *.yml} and {@code *.json} files are read in name order (not recursively). Prints
 * a readable table, or with {@code --json} a JSON report (shape in the module README). Exit status:
 * {@value #EXIT_CLEAN} when there is no ERROR finding (warnings and notes alone included), {@value
 * #EXIT_ERRORS} when there is at least one, {@value #EXIT_INPUT} when an input cannot be read or is
 * not valid YAML/JSON (the message on standard error names the file and document) or the command
 * line is wrong.
 */
public final class PreflightCommand {

  /** Exit status: no ERROR finding. */
  public static final int EXIT_CLEAN = 0;

  /** Exit status: at least one ERROR finding. */
  public static final int EXIT_ERRORS = 1;

  /** Exit status: unreadable or invalid input, or bad usage. */
  public static final int EXIT_INPUT = 2;

  private static final String USAGE =
      "usage: preflight [--json] FILE...\n"
          + "  Checks Coscheduling + HAMi manifests (hami-scheduler ConfigMap or KubeSchedulerConfiguration,\n"
          + "  scheduler Deployment or Helm values, RBAC, PodGroups, Pods and workloads) for known pitfalls.\n"
          + "  FILE may be a directory (its *.yaml, *.yml and *.json files).\n"
          + "  --json   print the report as JSON\n"
          + "  exit: 0 no errors, 1 error findings, 2 unreadable/invalid input (named; the other\n"
          + "        files are still judged) or bad usage\n";

  private PreflightCommand() {}

  /**
   * Runs the command and exits the JVM with its status.
   *
   * @param args command-line arguments
   */
  public static void main(String[] args) {
    System.exit(run(List.of(args), System.out, System.err));
  }

  /**
   * Runs the command without exiting.
   *
   * @param args command-line arguments ({@code --json}, {@code -h}/{@code --help}, {@code --},
   *     files)
   * @param out where the report goes
   * @param err where input and usage errors go
   * @return the exit status: {@link #EXIT_CLEAN}, {@link #EXIT_ERRORS} or {@link #EXIT_INPUT}
   */
  public static int run(List<String> args, PrintStream out, PrintStream err) {
    Objects.requireNonNull(args, "args");
    Objects.requireNonNull(out, "out");
    Objects.requireNonNull(err, "err");
    boolean json = false;
    boolean options = true;
    List<Path> files = new ArrayList<>();
    for (String a : args) {
      if (options && a.equals("--")) {
        options = false;
      } else if (options && a.equals("--json")) {
        json = true;
      } else if (options && (a.equals("-h") || a.equals("--help"))) {
        out.print(USAGE);
        return EXIT_CLEAN;
      } else if (options && a.startsWith("-") && a.length() > 1) {
        err.print("preflight: unknown option " + a + "\n" + USAGE);
        return EXIT_INPUT;
      } else {
        files.add(Path.of(a));
      }
    }
    if (files.isEmpty()) {
      err.print("preflight: no input files\n" + USAGE);
      return EXIT_INPUT;
    }
    List<Path> inputs;
    try {
      inputs = expand(files);
    } catch (IOException e) {
      err.println("preflight: " + e.getMessage());
      return EXIT_INPUT;
    }
    // a file that cannot be read or parsed is named on stderr and the others are still judged
    // (exit 2 all the same); with no readable file there is nothing to report
    List<String> read = new ArrayList<>();
    List<ManifestDocument> documents = new ArrayList<>();
    boolean unreadable = false;
    for (Path f : inputs) {
      try {
        documents.addAll(ManifestLoader.load(f));
        read.add(f.toString());
      } catch (ManifestException e) {
        err.println("preflight: " + e.getMessage());
        unreadable = true;
      }
    }
    if (read.isEmpty()) {
      return EXIT_INPUT;
    }
    PreflightReport report;
    try {
      report = Preflight.standard().check(read, documents);
    } catch (ManifestException e) {
      err.println("preflight: " + e.getMessage());
      return EXIT_INPUT;
    }
    out.print(json ? ReportWriter.json(report) : ReportWriter.table(report));
    out.flush();
    return unreadable ? EXIT_INPUT : report.hasErrors() ? EXIT_ERRORS : EXIT_CLEAN;
  }

  private static List<Path> expand(List<Path> args) throws IOException {
    List<Path> out = new ArrayList<>();
    for (Path p : args) {
      if (!Files.isDirectory(p)) {
        out.add(p);
        continue;
      }
      try (Stream<Path> s = Files.list(p)) {
        s.filter(
                f -> {
                  String n = f.getFileName().toString().toLowerCase(Locale.ROOT);
                  return Files.isRegularFile(f)
                      && (n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json"));
                })
            .sorted()
            .forEach(out::add);
      } catch (IOException e) {
        throw new IOException(p + ": cannot list directory: " + e.getMessage(), e);
      }
    }
    return out;
  }
}
