package dev.hamilock.benchmarks.convergence;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.util.Arrays;
import java.util.Collection;

/** Order statistics for small samples (nearest-rank percentiles, no interpolation). */
public final class Stats {

  private Stats() {}

  /**
   * The nearest-rank percentile: the smallest sample with at least {@code p} % of the samples at or
   * below it.
   *
   * @param values samples; may be empty
   * @param p percentile in (0, 100]
   * @return the percentile, NaN for no samples
   * @throws IllegalArgumentException if {@code p} is outside (0, 100]
   */
  public static double percentile(Collection<Double> values, double p) {
    checkArgument(p > 0 && p <= 100, "percentile must be in (0, 100], got %s", p);
    if (values.isEmpty()) {
      return Double.NaN;
    }
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, rank - 1)];
  }

  /**
   * The median: the middle sample, or the mean of the two middle samples for an even count.
   *
   * @param values samples; may be empty
   * @return the median, NaN for no samples
   */
  public static double median(Collection<Double> values) {
    if (values.isEmpty()) {
      return Double.NaN;
    }
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }

  /**
   * @return the smallest sample, NaN for none
   */
  public static double min(Collection<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
  }

  /**
   * @return the largest sample, NaN for none
   */
  public static double max(Collection<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
  }

  static double[] toArray(Collection<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).toArray();
  }

  static String join(Collection<Double> values) {
    return String.join(
        ";", Arrays.stream(toArray(values)).mapToObj(v -> String.format("%.2f", v)).toList());
  }
}
