package dev.hamilock.benchmarks.convergence;

import java.util.Objects;

/**
 * API requests of one uncontended lock cycle (median over the measured iterations; latency 0).
 *
 * @param algorithmKey {@link Algorithm#key()}
 * @param algorithmLabel {@link Algorithm#label()}
 * @param ours whether the algorithm is this library's
 * @param acquire requests of one acquire on a free node
 * @param releaseSameProcess requests of the release by the process that acquired (bind-failure
 *     path)
 * @param releaseByPlugin requests of the release by the device plugin (another process)
 * @param acquireDetail e.g. {@code get nodes=3, patch nodes=1}
 * @param releaseDetail the same-process release by verb
 * @param pluginDetail the plugin release by verb
 */
public record UncontendedCost(
    String algorithmKey,
    String algorithmLabel,
    boolean ours,
    double acquire,
    double releaseSameProcess,
    double releaseByPlugin,
    String acquireDetail,
    String releaseDetail,
    String pluginDetail) {
  /**
   * @throws NullPointerException if a text component is null
   */
  public UncontendedCost {
    Objects.requireNonNull(algorithmKey, "algorithmKey");
    Objects.requireNonNull(algorithmLabel, "algorithmLabel");
    Objects.requireNonNull(acquireDetail, "acquireDetail");
    Objects.requireNonNull(releaseDetail, "releaseDetail");
    Objects.requireNonNull(pluginDetail, "pluginDetail");
  }

  /**
   * @return acquire + same-process release
   */
  public double acquireAndRelease() {
    return acquire + releaseSameProcess;
  }
}
