package dev.hamilock.preflight;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
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
 * *.yaml}, {@code *.yml} and {@code *.json} files are read in name order. Each set-up is judged on
 * its own: the files named on the command line form one, a directory's own files another, and each
 * of its sub-directories (with everything below it) one more; with several set-ups every finding
 * names its set-up (the directory). Prints a readable table, or with {@code --json} a JSON report
 * (shape in the module README). Exit status: {@value #EXIT_CLEAN} when there is no ERROR finding
 * (warnings and notes alone included), {@value #EXIT_ERRORS} when there is at least one, {@value
 * #EXIT_INPUT} when an input cannot be read or is not valid YAML/JSON (the message on standard
 * error names the file and document) or the command line is wrong.
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
          + "  FILE may be a directory (its *.yaml, *.yml and *.json files). The files named here form\n"
          + "  one set-up together; a directory gives one set-up of its own files and one per\n"
          + "  sub-directory (everything below it); each set-up is judged on its own.\n"
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
    List<SetUp> setUps;
    try {
      setUps = setUps(files);
    } catch (IOException e) {
      err.println("preflight: " + e.getMessage());
      return EXIT_INPUT;
    }
    // a file that cannot be read or parsed is named on stderr and the others are still judged
    // (exit 2 all the same); with no readable file there is nothing to report
    Preflight preflight = Preflight.standard();
    List<String> read = new ArrayList<>();
    List<Finding> findings = new ArrayList<>();
    int documentCount = 0;
    boolean unreadable = false;
    for (SetUp setUp : setUps) {
      List<String> setUpRead = new ArrayList<>();
      List<ManifestDocument> documents = new ArrayList<>();
      for (Path f : setUp.files()) {
        try {
          documents.addAll(ManifestLoader.load(f));
          setUpRead.add(f.toString());
        } catch (ManifestException e) {
          err.println("preflight: " + e.getMessage());
          unreadable = true;
        }
      }
      if (setUpRead.isEmpty()) {
        continue;
      }
      try {
        findings.addAll(
            preflight
                .check(setUps.size() == 1 ? "" : setUp.name(), setUpRead, documents)
                .findings());
      } catch (ManifestException e) {
        err.println("preflight: " + e.getMessage());
        unreadable = true;
        continue;
      }
      read.addAll(setUpRead);
      documentCount += documents.size();
    }
    if (read.isEmpty()) {
      return EXIT_INPUT;
    }
    findings.sort(Preflight.ORDER);
    PreflightReport report = new PreflightReport(read, documentCount, findings);
    out.print(json ? ReportWriter.json(report) : ReportWriter.table(report));
    out.flush();
    return unreadable ? EXIT_INPUT : report.hasErrors() ? EXIT_ERRORS : EXIT_CLEAN;
  }

  /**
   * One group of input files judged together, named by its directory.
   *
   * @param name the directory, or {@code (files)} for the files named on the command line
   * @param files its files, in name order
   */
  private record SetUp(String name, List<Path> files) {}

  /**
   * The files named on the command line form one set-up; each directory argument contributes one
   * set-up of its own manifest files and one per sub-directory (with everything below it, as {@code
   * helm template --output-dir} writes a chart's render). Set-ups without files are dropped.
   */
  private static List<SetUp> setUps(List<Path> args) throws IOException {
    List<Path> named = new ArrayList<>();
    List<SetUp> out = new ArrayList<>();
    for (Path p : args) {
      if (!Files.isDirectory(p)) {
        named.add(p);
        continue;
      }
      out.add(new SetUp(p.toString(), manifests(p, 1)));
      for (Path sub : list(p).filter(Files::isDirectory).sorted().toList()) {
        out.add(new SetUp(sub.toString(), manifests(sub, Integer.MAX_VALUE)));
      }
    }
    if (!named.isEmpty()) {
      out.add(0, new SetUp("(files)", named));
    }
    return out.stream().filter(s -> !s.files().isEmpty()).toList();
  }

  private static Stream<Path> list(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.toList().stream();
    } catch (IOException e) {
      throw new IOException(dir + ": cannot list directory: " + e.getMessage(), e);
    }
  }

  /** The {@code *.yaml}, {@code *.yml} and {@code *.json} files under {@code dir}, sorted. */
  private static List<Path> manifests(Path dir, int depth) throws IOException {
    try (Stream<Path> s = Files.walk(dir, depth)) {
      return s.filter(
              f -> {
                String n = f.getFileName().toString().toLowerCase(Locale.ROOT);
                return Files.isRegularFile(f)
                    && (n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json"));
              })
          .sorted()
          .toList();
    } catch (IOException | UncheckedIOException e) {
      throw new IOException(dir + ": cannot list directory: " + e.getMessage(), e);
    }
  }
}
