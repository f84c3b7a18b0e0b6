package dev.hamilock.testkit;

import static dev.hamilock.testkit.Checks.checkArgument;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Artificial latency added before the emulator handles each request (see {@link
 * ApiServerEmulator#setLatency(Latency)}). The delay is drawn uniformly from {@code [min, max]};
 * {@code min == max} is a fixed delay.
 *
 * @param min the smallest delay; not negative
 * @param max the largest delay; at least {@code min}
 */
public record Latency(Duration min, Duration max) {
  /** No added latency. */
  public static final Latency NONE = new Latency(Duration.ZERO, Duration.ZERO);

  /**
   * @throws IllegalArgumentException if {@code min} is negative or {@code max < min}
   */
  public Latency {
    Objects.requireNonNull(min, "min");
    Objects.requireNonNull(max, "max");
    checkArgument(!min.isNegative(), "min latency must not be negative: %s", min);
    checkArgument(max.compareTo(min) >= 0, "max latency %s is below min latency %s", max, min);
  }

  /**
   * @param delay the delay for every request; not negative
   */
  public static Latency fixed(Duration delay) {
    return new Latency(delay, delay);
  }

  /**
   * @param min smallest delay
   * @param max largest delay
   * @return a latency drawn uniformly from {@code [min, max]}
   */
  public static Latency uniform(Duration min, Duration max) {
    return new Latency(min, max);
  }

  /**
   * @return one delay drawn from the range, in nanoseconds
   */
  long sampleNanos() {
    long lo = min.toNanos();
    long hi = max.toNanos();
    return lo == hi ? lo : ThreadLocalRandom.current().nextLong(lo, hi + 1);
  }
}
