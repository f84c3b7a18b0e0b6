package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.RetryPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The retry deadline is the acquirer's own ({@code start + retryTimeout} on its injected {@link
 * dev.hamilock.core.WaitClock}), and once it has passed exactly one last attempt runs and the call
 * ends. Everything here runs on a stepped clock, so the whole 28 s default budget is checked
 * without waiting 28 s.
 *
 * <p>The flake this pins (NodeLockAcquirerTest v29: 24 attempts with a bound of 5;
 * ReliableWaitTest: 29 with a bound of 6, both under a load average of 20+ on 2 cores): when the
 * loop still ran inside Failsafe, a wait that found the deadline passed returned at once and
 * Failsafe retried at once, so every acquisition ended with a busy loop of attempts until
 * Failsafe's own wall-clock budget ran out (55 attempts instead of 3 in the 300 ms case and
 * 1,058,683 instead of 32 in the 28 s case on the stepped clock). The plain deadline loop that
 * replaced it (issue 17 item 8) has one budget, on one clock; each test here fails if a passed
 * deadline ever leads to another wait-less attempt.
 */
class AcquireDeadlineTest {

  private static final String NODE = "worker-1";
  private static final LockOwner POD = LockOwner.of("default", "gang-pod-1");
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());

  private ScriptedLock alwaysContended() {
    return new ScriptedLock(
        "NVIDIA",
        log,
        call -> {
          throw ScriptedLock.contention("NVIDIA");
        },
        null);
  }

  @Test
  void afterTheDeadlineOnTheAcquirersClockOneLastAttemptRunsThenTheCallEnds() {
    SteppedClock clock = SteppedClock.maxJitter();
    ScriptedLock lock = alwaysContended();
    RetryPolicy p = RetryPolicy.builder().retryTimeout(Duration.ofMillis(300)).build();
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(
                        LockSettings.builder().retryPolicy(p).waitClock(clock).build())
                    .acquire(NODE, POD, true, List.of(lock)))
        .isInstanceOfSatisfying(
            LockWaitTimeoutException.class,
            e -> {
              // t=0 attempt, wait 100 ms (bound 100), t=100 attempt, wait 200 ms (bound 200,
              // exactly to the deadline), t=300 the last attempt; then no wait and no attempt
              assertThat(e.attempts()).isEqualTo(3);
              assertThat(e.waited()).isEqualTo(Duration.ofMillis(300));
            });
    assertThat(lock.acquireCalls).hasValue(3);
    assertThat(clock.sleeps())
        .containsExactly(Duration.ofMillis(100).toNanos(), Duration.ofMillis(200).toNanos());
  }

  @Test
  void aWholeDefaultRetryTimeoutCostsOneAttemptPerWaitPlusTheFirst() {
    SteppedClock clock = SteppedClock.maxJitter();
    ScriptedLock lock = alwaysContended();
    RetryPolicy p = RetryPolicy.defaults(); // 28 s, 100 ms poll, back-off to 1 s
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(
                        LockSettings.builder().retryPolicy(p).waitClock(clock).build())
                    .acquire(NODE, POD, true, List.of(lock)))
        .isInstanceOfSatisfying(
            LockWaitTimeoutException.class,
            e -> {
              // waits 100+200+400+800 = 1.5 s, then 26 of 1 s, then 0.5 s to the deadline
              assertThat(e.attempts()).isEqualTo(1 + 4 + 26 + 1);
              assertThat(e.waited()).isEqualTo(p.retryTimeout());
            });
    assertThat(clock.sleeps()).hasSize(31);
    assertThat(clock.sleeps().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(p.retryTimeout().toNanos());
  }

  /** A loaded machine wakes sleepers late: the attempts go down, never up. */
  @Test
  void lateWakeUpsMeanFewerAttemptsNotMore() {
    RetryPolicy p =
        RetryPolicy.builder()
            .retryTimeout(Duration.ofMillis(300))
            .maxPollInterval(RetryPolicy.DEFAULT_POLL_INTERVAL)
            .build(); // HAMi's fixed 100 ms poll
    int[] attempts = new int[4];
    long[] lateMs = {0, 30, 120, 1_000};
    for (int i = 0; i < lateMs.length; i++) {
      long late = Duration.ofMillis(lateMs[i]).toNanos();
      SteppedClock clock = new SteppedClock(bound -> bound - 1, asked -> late);
      ScriptedLock lock = alwaysContended();
      int k = i;
      assertThatThrownBy(
              () ->
                  NodeLockAcquirer.create(
                          LockSettings.builder().retryPolicy(p).waitClock(clock).build())
                      .acquire(NODE, POD, true, List.of(lock)))
          .isInstanceOfSatisfying(LockWaitTimeoutException.class, e -> attempts[k] = e.attempts());
      // never a wait that ends after the deadline... unless the sleeper itself was late
      assertThat(clock.sleeps())
          .allSatisfy(
              s -> assertThat(s).isPositive().isLessThanOrEqualTo(p.pollInterval().toNanos()));
    }
    // on time: t=0,100,200,300; 30 ms late: t=0,130,260,300 (the last wait clipped to the
    // deadline, then late); 120 ms late: t=0,220,300; 1 s late: t=0, 1100 (past the deadline)
    assertThat(attempts).containsExactly(4, 4, 3, 2);
  }

  @Test
  void aReliableSignalsWaitsOnALoadedMachineAlsoMeanFewerAttempts() {
    long late = Duration.ofMillis(50).toNanos();
    SteppedClock clock = new SteppedClock(bound -> bound - 1, asked -> late);
    FakeSignal signal = new FakeSignal(call -> true, clock);
    ReliableWaitTest.SignalledLock lock = new ReliableWaitTest.SignalledLock(signal, 0);
    RetryPolicy p = ReliableWaitTest.policy(20, 120, 500);
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(
                        LockSettings.builder().retryPolicy(p).waitClock(clock).build())
                    .acquire(NODE, POD, true, List.of(lock)))
        .isInstanceOfSatisfying(
            LockWaitTimeoutException.class,
            e -> {
              // each 20 ms slice takes 70 ms: 2 slices (140 ms) per wait → t=0,140,280,420,
              // then one slice clipped to 500 (ends at 550), the last attempt, end
              assertThat(e.attempts()).isEqualTo(5);
            });
    assertThat(lock.calls).hasValue(5);
  }
}
