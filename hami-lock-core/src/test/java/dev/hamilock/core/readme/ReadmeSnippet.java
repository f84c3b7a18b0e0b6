package dev.hamilock.core.readme;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Keeps a README's code sample and the test that compiles and runs it the same: the lines of a test
 * source between the {@code // README:begin} and {@code // README:end} markers must appear in the
 * README verbatim (modulo indentation and runs of spaces) and in the same order. Shared through
 * this module's test-jar by every README example test (this module's {@code ReadmeExampleTest},
 * hami-lock-k8s's {@code ReadmeBindFlowTest}).
 */
public final class ReadmeSnippet {
  private ReadmeSnippet() {}

  /**
   * Asserts that the marked snippet of {@code testSource} is shown in {@code readme}.
   *
   * @param testSource the test's source file, relative to the module directory
   * @param readme the README, e.g. {@code ../README.md}
   * @return the snippet's lines (not empty)
   * @throws IOException if a file cannot be read
   */
  public static List<String> assertShownIn(Path testSource, Path readme) throws IOException {
    List<String> snippet =
        between(Files.readAllLines(testSource), "// README:begin", "// README:end");
    assertThat(snippet).as("marked snippet in %s", testSource).isNotEmpty();
    // spacing is normalised on both sides: the README aligns trailing comments for the eye, the
    // test source is google-java-format's (which also wraps long lines: each wrapped piece is
    // still found, in order)
    String readmeText = normalize(Files.readString(readme));
    int from = 0;
    for (String line : snippet) {
      String s = normalize(line);
      int at = readmeText.indexOf(s, from);
      assertThat(at).as("README line (in snippet order): %s", s).isNotNegative();
      from = at + s.length();
    }
    return snippet;
  }

  /**
   * @param lines source lines
   * @param begin begin marker (a whole stripped line)
   * @param end end marker
   * @return the lines strictly between the first begin marker and the next end marker; empty if
   *     either is missing
   */
  public static List<String> between(List<String> lines, String begin, String end) {
    int from = -1;
    int to = -1;
    for (int i = 0; i < lines.size(); i++) {
      String s = lines.get(i).strip();
      if (s.equals(begin) && from < 0) {
        from = i + 1;
      } else if (s.equals(end) && from >= 0) {
        to = i;
        break;
      }
    }
    return from < 0 || to < 0 ? List.of() : lines.subList(from, to);
  }

  private static String normalize(String text) {
    return text.strip().replaceAll("\\s+", " ");
  }
}
