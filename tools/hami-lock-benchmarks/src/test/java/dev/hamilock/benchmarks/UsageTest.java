package dev.hamilock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.benchmarks.convergence.Algorithm;
import dev.hamilock.benchmarks.convergence.Algorithms;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** {@code --help} prints every option the parser takes and every selectable algorithm key. */
class UsageTest {

  @Test
  void helpListsEveryOptionAndAlgorithmKeyAndRunsNothing() throws Exception {
    PrintStream old = System.out;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      BenchmarksMain.main(new String[] {"--help"});
    } finally {
      System.setOut(old);
    }
    String help = out.toString(StandardCharsets.UTF_8);
    assertThat(help).startsWith("usage:");
    for (String option :
        new String[] {
          "--out",
          "--reps",
          "--backoff-scale",
          "--skip-jmh",
          "--quick",
          "--only",
          "--algorithm",
          "--backend",
          "--help"
        }) {
      assertThat(help).contains(option);
      // the parser knows each documented option: the class's switch names it as a case
      assertThat(
              Files.readString(
                  Path.of("src/main/java/dev/hamilock/benchmarks/BenchmarksMain.java")))
          .contains("case \"" + option + "\"");
    }
    for (Algorithm a : Algorithms.selectable()) {
      assertThat(help).contains(a.key());
    }
  }
}
