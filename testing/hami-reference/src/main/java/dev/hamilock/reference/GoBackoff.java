package dev.hamilock.reference;

import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.util.function.DoubleSupplier;
import java.util.function.Predicate;

/**
 * client-go {@code retry.OnError(DefaultStrategy, retriable, fn)} with HAMi's {@code
 * DefaultStrategy = wait.Backoff{Steps: 5, Duration: 100ms, Factor: 2.0, Jitter: 0.5}} ({@code
 * pkg/util/nodelock/nodelock.go}, spec §1.10): up to 5 attempts; between attempts sleep d·(1 +
 * 0.5·U[0,1)) with d = 100, 200, 400, 800 ms; a rejected error is returned at once; when attempts
 * run out the last error is returned.
 */
final class GoBackoff {

  static final int STEPS = 5;
  static final Duration INITIAL = Duration.ofMillis(100);
  static final double FACTOR = 2.0;
  static final double JITTER = 0.5;

  /** Go's {@code %+v} of the backoff struct, as HAMi prints it in its wrapper errors. */
  static final String GO_TEXT = "{Duration:100ms Factor:2 Jitter:0.5 Steps:5 Cap:0s}";

  /** One attempt of the retried function. */
  @FunctionalInterface
  interface Attempt {
    void run() throws ApiException, HamiException;
  }

  private final Sleeper sleeper;
  private final DoubleSupplier uniform;

  GoBackoff(Sleeper sleeper, DoubleSupplier uniform) {
    this.sleeper = sleeper;
    this.uniform = uniform;
  }

  /**
   * Runs {@code attempt} under the backoff.
   *
   * @return {@code null} on success, else the terminal error (an {@link ApiException} or a {@link
   *     HamiException})
   * @throws InterruptedException if interrupted while sleeping between attempts
   */
  Exception onError(Attempt attempt, Predicate<Exception> retriable) throws InterruptedException {
    long durationNanos = INITIAL.toNanos();
    Exception last = null;
    for (int step = STEPS; step > 0; step--) {
      try {
        attempt.run();
        return null;
      } catch (ApiException | HamiException e) {
        if (!retriable.test(e)) {
          return e;
        }
        last = e;
      }
      if (step == 1) {
        break;
      }
      long sleep = durationNanos + (long) (uniform.getAsDouble() * JITTER * durationNanos);
      durationNanos = (long) (durationNanos * FACTOR);
      sleeper.sleep(Duration.ofNanos(sleep));
    }
    return last;
  }
}
