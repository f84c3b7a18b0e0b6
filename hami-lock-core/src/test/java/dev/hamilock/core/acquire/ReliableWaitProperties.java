package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.testing.generators.Props;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Whatever the signal says about its reliability, call by call, no wait overruns its bounds. */
class ReliableWaitProperties {

  /**
   * 15 examples: poll 1–4 ms, watched interval 1–5 polls, timeout 5–40 ms, any seed for the signal.
   */
  @Test
  void noWaitOverrunsTheDeadlineTheSliceOrTheWatchedInterval() {
    Props.qt(15)
        .withShrinkCycles(100)
        .forAll(
            integers().between(1, 4),
            integers().between(1, 5),
            integers().between(5, 40),
            longs().all())
        .checkAssert(ReliableWaitProperties::noWaitOverruns);
  }

  private static void noWaitOverruns(int pollMs, int watchedFactor, int timeoutMs, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    FakeSignal signal = new FakeSignal(call -> random.nextBoolean());
    ReliableWaitTest.SignalledLock lock = new ReliableWaitTest.SignalledLock(signal, 0);
    RetryPolicy p =
        RetryPolicy.builder()
            .pollInterval(Duration.ofMillis(pollMs))
            .watchedPollInterval(Duration.ofMillis((long) pollMs * watchedFactor))
            .maxPollInterval(Duration.ofMillis((long) pollMs * watchedFactor))
            .retryTimeout(Duration.ofMillis(timeoutMs))
            .build();
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(p)
                    .acquire(ReliableWaitTest.NODE, ReliableWaitTest.POD, true, List.of(lock)))
        .isInstanceOf(LockWaitTimeoutException.class);
    long deadline = lock.firstAttemptNanos.get() + p.retryTimeout().toNanos();
    List<FakeSignal.Wait> waits = signal.waits();
    assertThat(waits)
        .allSatisfy(
            w -> {
              assertThat(w.timeoutNanos())
                  .isPositive()
                  .isLessThanOrEqualTo(p.pollInterval().toNanos());
              assertThat(w.endNanos()).isLessThanOrEqualTo(deadline);
            });
    Map<Integer, Long> perAttempt = ReliableWaitTest.waitedPerAttempt(waits);
    assertThat(perAttempt.values())
        .allSatisfy(
            total -> assertThat(total).isLessThanOrEqualTo(p.watchedPollInterval().toNanos()));
  }
}
