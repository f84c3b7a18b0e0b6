package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The acquirer's two waiting modes with a scripted signal: while the signal is reliable it waits up
 * to the watched poll interval (in slices of at most one poll interval), otherwise one poll
 * interval; a change ends the wait at once; the retry deadline is never overrun.
 */
class ReliableWaitTest {

  static final String NODE = "worker-1";
  static final LockOwner POD = LockOwner.of("default", "gang-pod-1");

  /**
   * A lock contended until attempt {@code freeFrom} (never if 0), signalling through {@code
   * signal}.
   */
  static final class SignalledLock implements NodeLock {
    final FakeSignal signal;
    final int freeFrom;
    final AtomicInteger calls = new AtomicInteger();
    final AtomicLong firstAttemptNanos = new AtomicLong();

    SignalledLock(FakeSignal signal, int freeFrom) {
      this.signal = signal;
      this.freeFrom = freeFrom;
    }

    @Override
    public String key() {
      return NodeLock.DEFAULT_KEY;
    }

    @Override
    public Duration lockTimeout() {
      return Duration.ofMinutes(5);
    }

    @Override
    public AcquireOutcome acquire(String node, LockOwner owner) throws LockContentionException {
      int n = calls.incrementAndGet();
      firstAttemptNanos.compareAndSet(0, signal.now());
      signal.attempts = n;
      if (freeFrom > 0 && n >= freeFrom) {
        return AcquireOutcome.ACQUIRED;
      }
      throw ScriptedLock.contention(key());
    }

    @Override
    public boolean release(String node, LockOwner owner) {
      return true;
    }

    @Override
    public Optional<LockRecord> read(String node) {
      return Optional.empty();
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return Optional.of(signal);
    }
  }

  static RetryPolicy policy(long pollMs, long watchedMs, long timeoutMs) {
    return RetryPolicy.builder()
        .pollInterval(Duration.ofMillis(pollMs))
        .watchedPollInterval(Duration.ofMillis(watchedMs))
        .retryTimeout(Duration.ofMillis(timeoutMs))
        .build();
  }

  /** Sums the await timeouts of each wait (waits grouped by the attempt they follow). */
  static Map<Integer, Long> waitedPerAttempt(List<FakeSignal.Wait> waits) {
    Map<Integer, Long> out = new TreeMap<>();
    for (FakeSignal.Wait w : waits) {
      out.merge(w.attemptsBefore(), w.timeoutNanos(), Long::sum);
    }
    return out;
  }

  @Test
  void reliableSignalStretchesTheWaitToTheWatchedIntervalInPollSizedSlicesWithinTheDeadline() {
    // on a stepped clock (each slice takes exactly its timeout): the counts are logical facts.
    // On the real clock a slice woken 100 ms late by a loaded machine ends its wait after one
    // slice, and the old busy loop after the deadline made 29 attempts (AcquireDeadlineTest)
    SteppedClock clock = SteppedClock.maxJitter();
    FakeSignal signal = new FakeSignal(call -> true, clock);
    SignalledLock lock = new SignalledLock(signal, 0);
    RetryPolicy p = policy(20, 120, 500);
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(
                        LockSettings.builder().retryPolicy(p).waitClock(clock).build())
                    .acquire(NODE, POD, true, List.of(lock)))
        .isInstanceOfSatisfying(
            LockWaitTimeoutException.class,
            e -> assertThat(e.waited()).isEqualTo(p.retryTimeout()));
    List<FakeSignal.Wait> waits = signal.waits();
    long poll = p.pollInterval().toNanos();
    long deadline = lock.firstAttemptNanos.get() + p.retryTimeout().toNanos();
    assertThat(waits)
        .isNotEmpty()
        .allSatisfy(
            w -> {
              assertThat(w.timeoutNanos()).isEqualTo(poll);
              assertThat(w.endNanos()).isLessThanOrEqualTo(deadline);
              assertThat(w.changed()).isFalse();
            });
    // attempts at t = 0, 120, 240, 360, 480 each followed by a whole watched interval of six
    // 20 ms slices — the last one cut at the deadline after one slice — then the last attempt
    assertThat(waitedPerAttempt(waits))
        .containsExactly(
            Map.entry(1, 120_000_000L),
            Map.entry(2, 120_000_000L),
            Map.entry(3, 120_000_000L),
            Map.entry(4, 120_000_000L),
            Map.entry(5, 20_000_000L));
    assertThat(waits).hasSize(4 * 6 + 1);
    assertThat(lock.calls).hasValue(6);
    // a reliable signal is waited on, never slept through: every timer is a signal wait's timeout
    assertThat(clock.sleeps()).containsExactlyElementsOf(waits.stream().map(w -> poll).toList());
  }

  /** The same on the real clock: only facts that timing cannot change. */
  @Test
  void reliableSignalOnTheRealClockNeverOverrunsASliceTheWatchedIntervalOrTheDeadline() {
    FakeSignal signal = new FakeSignal(call -> true);
    SignalledLock lock = new SignalledLock(signal, 0);
    RetryPolicy p = policy(20, 120, 500);
    assertThatThrownBy(() -> NodeLockAcquirer.create(p).acquire(NODE, POD, true, List.of(lock)))
        .isInstanceOf(LockWaitTimeoutException.class);
    List<FakeSignal.Wait> waits = signal.waits();
    long deadline = lock.firstAttemptNanos.get() + p.retryTimeout().toNanos();
    assertThat(waits)
        .isNotEmpty()
        .allSatisfy(
            w -> {
              assertThat(w.timeoutNanos())
                  .isPositive()
                  .isLessThanOrEqualTo(p.pollInterval().toNanos());
              assertThat(w.endNanos()).isLessThanOrEqualTo(deadline);
              assertThat(w.changed()).isFalse();
            });
    assertThat(waitedPerAttempt(waits).values())
        .allSatisfy(
            total -> assertThat(total).isLessThanOrEqualTo(p.watchedPollInterval().toNanos()));
    // every attempt after the first follows a wait that ended at the watched interval or the
    // deadline; late wake-ups only lengthen waits, so at most timeout / watched + 2 attempts
    assertThat(lock.calls.get()).isLessThanOrEqualTo(500 / 120 + 2);
  }

  @Test
  void unreliableSignalWithoutBackOffWaitsAtMostOnePollIntervalPerAttempt() {
    FakeSignal signal = new FakeSignal(call -> false);
    SignalledLock lock = new SignalledLock(signal, 4);
    RetryPolicy p =
        RetryPolicy.builder()
            .pollInterval(Duration.ofMillis(10))
            .maxPollInterval(Duration.ofMillis(10))
            .watchedPollInterval(Duration.ofMillis(10_000))
            .retryTimeout(Duration.ofMillis(20_000))
            .build();
    LockAcquisitionResult r =
        LockAcquisitionResult.of(
            () -> NodeLockAcquirer.create(p).acquire(NODE, POD, true, List.of(lock)));
    assertThat(r.acquisition().attempts()).isEqualTo(4);
    List<FakeSignal.Wait> waits = signal.waits();
    assertThat(waits)
        .hasSize(3)
        .allSatisfy(
            w -> assertThat(w.timeoutNanos()).isLessThanOrEqualTo(p.pollInterval().toNanos()));
    assertThat(waitedPerAttempt(waits)).containsOnlyKeys(1, 2, 3);
  }

  @Test
  void aSignalThatStopsBeingReliableReturnsTheWaiterToThePollWithinOneSlice() {
    // reliable on the first question only: the wait then ends after its first slice
    FakeSignal signal = new FakeSignal(call -> call == 0);
    SignalledLock lock = new SignalledLock(signal, 2);
    RetryPolicy p = policy(20, 20_000, 25_000);
    LockAcquisitionResult r =
        LockAcquisitionResult.of(
            () -> NodeLockAcquirer.create(p).acquire(NODE, POD, true, List.of(lock)));
    assertThat(r.acquisition().attempts()).isEqualTo(2);
    assertThat(signal.waits())
        .hasSize(1)
        .allSatisfy(
            w -> assertThat(w.timeoutNanos()).isLessThanOrEqualTo(p.pollInterval().toNanos()));
    assertThat(r.acquisition().waited()).isLessThan(p.watchedPollInterval());
  }

  @Test
  void aReleaseEndsAReliableWaitAtOnce() {
    FakeSignal signal = new FakeSignal(call -> true);
    signal.onWait =
        n -> {
          if (n == 2) {
            signal.fire(); // the release arrives during the third slice of the first wait
          }
        };
    SignalledLock lock = new SignalledLock(signal, 2);
    RetryPolicy p = policy(5, 20_000, 25_000);
    LockAcquisitionResult r =
        LockAcquisitionResult.of(
            () -> NodeLockAcquirer.create(p).acquire(NODE, POD, true, List.of(lock)));
    assertThat(r.acquisition().attempts()).isEqualTo(2);
    List<FakeSignal.Wait> waits = signal.waits();
    assertThat(waits).hasSize(3);
    assertThat(waits.get(2).changed()).isTrue();
    assertThat(waits.subList(0, 2)).allSatisfy(w -> assertThat(w.changed()).isFalse());
    assertThat(r.acquisition().waited()).isLessThan(p.watchedPollInterval());
  }

  /** Runs an acquisition and rethrows any failure unchecked, for assertion chains. */
  record LockAcquisitionResult(LockAcquisition acquisition) {
    interface Body {
      LockAcquisition run() throws Exception;
    }

    static LockAcquisitionResult of(Body body) {
      try {
        return new LockAcquisitionResult(body.run());
      } catch (Exception e) {
        throw new AssertionError("acquire failed: " + e, e);
      }
    }
  }
}
