package dev.hamilock.bind;

import java.time.Duration;
import java.util.Objects;

/**
 * How long each step of one {@link PodBinder#bind} call took, measured with the binder's clock
 * (millisecond resolution with the system clock). Steps not reached are {@link Duration#ZERO}.
 *
 * @param lockWait acquiring every node lock, including gang retries
 * @param refit re-reading the node and its pods and checking or re-fitting the allocation
 * @param annotate writing the allocation annotations
 * @param binding posting the Binding (including re-reads after an ambiguous answer)
 * @param cleanup clearing annotations and releasing locks after a failure
 * @param total the whole call
 */
public record BindTimings(
    Duration lockWait,
    Duration refit,
    Duration annotate,
    Duration binding,
    Duration cleanup,
    Duration total) {

  /** All zero. */
  public static final BindTimings ZERO =
      new BindTimings(
          Duration.ZERO, Duration.ZERO, Duration.ZERO, Duration.ZERO, Duration.ZERO, Duration.ZERO);

  /**
   * @throws NullPointerException if a component is null
   */
  public BindTimings {
    Objects.requireNonNull(lockWait, "lockWait");
    Objects.requireNonNull(refit, "refit");
    Objects.requireNonNull(annotate, "annotate");
    Objects.requireNonNull(binding, "binding");
    Objects.requireNonNull(cleanup, "cleanup");
    Objects.requireNonNull(total, "total");
  }
}
