package dev.hamilock.benchmarks.jmh;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs {@link FitBenchmark} and {@link CodecBenchmark} through the JMH {@link Runner} (forked JVMs,
 * so it must run from the benchmarks jar, whose class path the forks reuse) with the {@link
 * GCProfiler} ({@code -prof gc}), and returns the figures for the report.
 */
public final class JmhSuite {

  /**
   * One benchmark's figures.
   *
   * @param benchmark short name, {@code Class.method}
   * @param score mean time per operation
   * @param error 99.9 % confidence half-width of {@code score} (NaN if unknown)
   * @param unit unit of {@code score} and {@code error}, e.g. {@code ms/op}
   * @param allocBytesPerOp heap allocation per operation in bytes ({@code gc.alloc.rate.norm}), NaN
   *     if not measured
   * @param allocMbPerSecond allocation rate in MB/s ({@code gc.alloc.rate}), NaN if not measured
   */
  public record Figure(
      String benchmark,
      double score,
      double error,
      String unit,
      double allocBytesPerOp,
      double allocMbPerSecond) {
    /**
     * @throws NullPointerException if a text component is null
     */
    public Figure {
      Objects.requireNonNull(benchmark, "benchmark");
      Objects.requireNonNull(unit, "unit");
    }
  }

  private JmhSuite() {}

  /**
   * Runs both benchmark classes.
   *
   * @param quick one short warm-up and measurement iteration each (for a fast check of the
   *     command), instead of the annotated 3–6 warm-up and 5 measurement iterations
   * @return one figure per benchmark method, in JMH's order
   * @throws RunnerException if JMH fails or a benchmark throws
   */
  public static List<Figure> run(boolean quick) throws RunnerException {
    ChainedOptionsBuilder options =
        new OptionsBuilder()
            .include("^" + Pattern.quote(FitBenchmark.class.getName()) + "\\.")
            .include("^" + Pattern.quote(CodecBenchmark.class.getName()) + "\\.")
            .addProfiler(GCProfiler.class)
            .shouldFailOnError(true);
    if (quick) {
      options
          .warmupIterations(1)
          .warmupTime(TimeValue.milliseconds(500))
          .measurementIterations(1)
          .measurementTime(TimeValue.milliseconds(500));
    }
    Collection<RunResult> results = new Runner(options.build()).run();
    List<Figure> figures = new ArrayList<>(results.size());
    for (RunResult r : results) {
      Result<?> primary = r.getPrimaryResult();
      String label = r.getParams().getBenchmark();
      String shortName = label.substring(label.lastIndexOf('.', label.lastIndexOf('.') - 1) + 1);
      figures.add(
          new Figure(
              shortName,
              primary.getScore(),
              primary.getScoreError(),
              primary.getScoreUnit(),
              secondary(r, "gc.alloc.rate.norm"),
              secondary(r, "gc.alloc.rate")));
    }
    return figures;
  }

  private static double secondary(RunResult r, String key) {
    Result<?> s = r.getSecondaryResults().get(key);
    return s == null ? Double.NaN : s.getScore();
  }
}
