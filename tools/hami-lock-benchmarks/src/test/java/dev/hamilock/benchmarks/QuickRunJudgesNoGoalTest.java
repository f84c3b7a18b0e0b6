package dev.hamilock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.benchmarks.report.ReportWriter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --quick} checks the command and judges no goal: neither on stderr nor in the {@code
 * results.md} it writes (a short run's figures read as a verdict there, "NOT met" or "met", are as
 * misleading as on the console).
 */
class QuickRunJudgesNoGoalTest {

  @Test
  void aQuickRunsReportCarriesNoVerdict(@TempDir Path out) throws Exception {
    PrintStream old = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      BenchmarksMain.main(
          new String[] {
            "--quick", "--skip-jmh", "--algorithm", "ours-watch", "--out", out.toString()
          });
    } finally {
      System.setErr(old);
    }
    String console = err.toString(StandardCharsets.UTF_8);
    assertThat(console).contains("not judged (--quick)").doesNotContain("-> met", "NOT met");

    String report = Files.readString(out.resolve(ReportWriter.MARKDOWN));
    String goals = report.substring(report.indexOf("## Goals"));
    goals = goals.substring(0, goals.indexOf("\nAlgorithms:"));
    assertThat(goals).as(goals).contains("N = 5").doesNotContain("| met |", "| NOT met |");
  }
}
