package dev.hamilock.benchmarks.convergence;

import java.util.List;

/** The algorithms the suite compares, in report order. */
public final class Algorithms {

  private Algorithms() {}

  /**
   * @return (a) HAMi's pod-group polling, (b) fail fast with kube-scheduler backoff, (c) this
   *     library with the watch wake-up, (d) this library polling only
   */
  public static List<Algorithm> all() {
    return List.of(
        new HamiPollingAlgorithm(),
        new FailFastBackoffAlgorithm(),
        new OurLockAlgorithm(true),
        new OurLockAlgorithm(false));
  }

  /**
   * @return {@link #all()} plus the opt-in ones only {@code --algorithm KEY} selects: {@code
   *     hami-polling-qps5}, hami-reference behind HAMi's deployed client rate limit (QPS 5, burst
   *     10: {@code cmd/scheduler --kube-qps/--kube-burst} defaults)
   */
  public static List<Algorithm> selectable() {
    List<Algorithm> out = new java.util.ArrayList<>(all());
    out.add(HamiPollingAlgorithm.withHamiClientRateLimit());
    return List.copyOf(out);
  }

  /**
   * @return the keys {@code --algorithm} accepts, comma-separated, in {@link #selectable()} order
   */
  public static String keys() {
    return String.join(", ", selectable().stream().map(Algorithm::key).toList());
  }
}
