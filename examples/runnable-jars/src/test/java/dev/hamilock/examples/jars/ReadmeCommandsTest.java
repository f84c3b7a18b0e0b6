package dev.hamilock.examples.jars;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every command and path a README gives works as written, after {@code mvn package}.
 *
 * <p><b>Convention</b>: every command in every README ({@code *.md} anywhere in the repository
 * outside {@code target/} and hidden directories) runs from the repository root, so every path in
 * it is relative to the root. Checked:
 *
 * <ul>
 *   <li>every {@code java -jar PATH} and {@code java -cp PATH}, in fenced shell blocks (no
 *       language, {@code sh}, {@code bash}, {@code shell}, {@code console}; usage text included)
 *       and in inline code: PATH exists;
 *   <li>every repository path on a command line of a fenced shell block (a line, after an optional
 *       {@code $ }, starting with {@code java}, {@code mvn}, {@code kubectl}, {@code helm} or a
 *       repository path): a word (or a {@code --flag=} value, or an item of a comma list) with a
 *       {@code /} whose first segment is an entry of the repository root or whose last segment is a
 *       file name ({@code .jar}, {@code .yaml}, {@code .yml}, {@code .json}, {@code .md}, {@code
 *       .sh}, {@code .svg}) exists. Not checked: absolute paths, {@code ~}, {@code $VAR}, URLs,
 *       upper-case placeholders, and the Go binaries under {@code testing/realcluster/bin/} and
 *       {@code testing/schedplugins/bin/} (built by their {@code build} scripts, not by Maven);
 *   <li>every documented {@code --help}: where a README names {@code --help} (alone or after other
 *       options, e.g. {@code --real-cluster --help}), each jar its commands run is run with those
 *       options and exits 0 printing its usage.
 * </ul>
 */
class ReadmeCommandsTest {
  private static final Set<String> SHELL = Set.of("", "sh", "bash", "shell", "console");
  private static final Pattern JAR = Pattern.compile("java -(?:jar|cp) ([^\\s`'\"]+)");
  private static final Pattern INLINE = Pattern.compile("`([^`\\n]+)`");
  private static final Pattern HELP = Pattern.compile("((?:--[a-z-]+ )*)--help\\b");
  private static final Pattern FILE = Pattern.compile(".*\\.(jar|ya?ml|json|md|sh|svg)");
  private static final List<String> GO_BUILT =
      List.of("testing/realcluster/bin/", "testing/schedplugins/bin/");

  /** One README: its fenced shell lines (continuations joined) and its inline code spans. */
  record Readme(Path file, List<String> shellLines, List<String> inlineCode) {
    String name() {
      return Jars.ROOT.relativize(file).toString();
    }
  }

  static List<Readme> readmes() throws IOException {
    try (Stream<Path> all = Files.walk(Jars.ROOT)) {
      List<Path> files =
          all.filter(p -> p.toString().endsWith(".md"))
              .filter(
                  p -> {
                    String rel = Jars.ROOT.relativize(p).toString();
                    return Stream.of(rel.split("/"))
                            .noneMatch(s -> s.equals("target") || s.startsWith("."))
                        && GO_BUILT.stream().noneMatch(rel::startsWith);
                  })
              .sorted()
              .toList();
      List<Readme> out = new ArrayList<>();
      for (Path f : files) {
        out.add(parse(f, Files.readAllLines(f)));
      }
      return out;
    }
  }

  static Readme parse(Path file, List<String> lines) {
    List<String> shell = new ArrayList<>();
    StringBuilder prose = new StringBuilder();
    String fence = null; // the info string of the open fence, null outside
    StringBuilder pending = new StringBuilder();
    for (String line : lines) {
      String t = line.strip();
      if (t.startsWith("```")) {
        fence = fence == null ? t.substring(3).strip() : null;
        continue;
      }
      if (fence == null) {
        prose.append(line).append('\n');
      } else if (SHELL.contains(fence)) {
        if (t.endsWith("\\")) {
          pending.append(t, 0, t.length() - 1).append(' ');
        } else {
          shell.add(pending.append(t).toString());
          pending.setLength(0);
        }
      }
    }
    List<String> inline = new ArrayList<>();
    Matcher m = INLINE.matcher(prose);
    while (m.find()) {
      inline.add(m.group(1));
    }
    return new Readme(file, shell, inline);
  }

  /** The jar and class-path files a README's commands name. */
  static Set<String> jars(Readme r) {
    Set<String> out = new LinkedHashSet<>();
    for (String text : Stream.concat(r.shellLines().stream(), r.inlineCode().stream()).toList()) {
      Matcher m = JAR.matcher(text);
      while (m.find()) {
        out.add(m.group(1));
      }
    }
    return out;
  }

  /** The repository paths on a README's command lines (see the class comment). */
  static Set<String> repositoryPaths(Readme r, Set<String> rootEntries) {
    Set<String> out = new LinkedHashSet<>();
    for (String line : r.shellLines()) {
      String cmd = line.startsWith("$ ") ? line.substring(2) : line;
      String first = cmd.split("\\s+", 2)[0];
      if (!Set.of("java", "mvn", "kubectl", "helm").contains(first) && !first.contains("/")) {
        continue;
      }
      for (String word : cmd.split("[\\s,=]+")) {
        String w = word.replaceAll("^[\"'(]+|[\"');]+$", "");
        if (!w.contains("/")
            || w.startsWith("/")
            || w.startsWith("~")
            || w.startsWith("-")
            || w.contains("$")
            || w.contains("://")
            || w.equals(w.toUpperCase(java.util.Locale.ROOT))) {
          continue;
        }
        String head = w.substring(0, w.indexOf('/'));
        String last = w.endsWith("/") ? "" : w.substring(w.lastIndexOf('/') + 1);
        if ((rootEntries.contains(head) || FILE.matcher(last).matches())
            && GO_BUILT.stream().noneMatch(w::startsWith)) {
          out.add(w);
        }
      }
    }
    return out;
  }

  @Test
  void everyJarAndRepositoryPathInEveryReadmeExistsAfterPackage() throws IOException {
    Set<String> rootEntries = new TreeSet<>();
    try (Stream<Path> top = Files.list(Jars.ROOT)) {
      top.forEach(p -> rootEntries.add(p.getFileName().toString()));
    }
    List<String> missing = new ArrayList<>();
    int checked = 0;
    for (Readme r : readmes()) {
      Set<String> paths = new LinkedHashSet<>(jars(r));
      paths.addAll(repositoryPaths(r, rootEntries));
      for (String p : paths) {
        checked++;
        if (!Files.exists(Jars.ROOT.resolve(p))) {
          missing.add(r.name() + ": " + p);
        }
      }
    }
    assertThat(missing).as("paths (relative to the repository root) that do not exist").isEmpty();
    // the readers found the commands: the root README alone names three jars
    assertThat(checked).isGreaterThan(20);
  }

  @Test
  void everyDocumentedHelpRunsAndExitsZero() throws IOException {
    List<String> failed = new ArrayList<>();
    int run = 0;
    for (Readme r : readmes()) {
      Set<String> options = new LinkedHashSet<>();
      for (String text : Stream.concat(r.shellLines().stream(), r.inlineCode().stream()).toList()) {
        Matcher m = HELP.matcher(text);
        while (m.find()) {
          options.add((m.group(1) + "--help").strip());
        }
      }
      for (String jar : jars(r)) {
        if (!jar.endsWith(".jar") || options.isEmpty()) {
          continue;
        }
        for (String o : options) {
          run++;
          Jars.Run help = Jars.run(Duration.ofMinutes(2), jar, o.split(" "));
          if (help.exit() != 0
              || !help.all().toLowerCase(java.util.Locale.ROOT).contains("usage")) {
            failed.add(
                r.name()
                    + ": java -jar "
                    + jar
                    + " "
                    + o
                    + " -> exit "
                    + help.exit()
                    + "\n"
                    + help.all());
          }
        }
      }
    }
    assertThat(failed).isEmpty();
    assertThat(run).as("documented --help commands found").isGreaterThan(3);
  }

  @Test
  void theReaderFindsCommandsInFencesAndInlineCodeButNotInOtherLanguages() {
    Readme r =
        parse(
            Jars.ROOT.resolve("x.md"),
            List.of(
                "Run `java -jar a/b.jar --real-cluster --help` first.",
                "```",
                "java -jar tools/x.jar \\",
                "  --manifests examples/y.yaml,examples/z.yaml default/gang-training NS/POD",
                "```",
                "```yaml",
                "java -jar never/seen.jar",
                "```"));
    assertThat(jars(r)).containsExactly("tools/x.jar", "a/b.jar");
    assertThat(repositoryPaths(r, Set.of("tools", "examples")))
        .containsExactly("tools/x.jar", "examples/y.yaml", "examples/z.yaml");
  }
}
