package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** Whatever the signal says about its reliability, call by call, no wait overruns its bounds. */
class ReliableWaitProperties {

    @Property(tries = 15)
    void noWaitOverrunsTheDeadlineTheSliceOrTheWatchedInterval(@ForAll @IntRange(min = 1, max = 4) int pollMs,
            @ForAll @IntRange(min = 1, max = 5) int watchedFactor, @ForAll @IntRange(min = 5, max = 40) int timeoutMs,
            @ForAll long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        FakeSignal signal = new FakeSignal(call -> random.nextBoolean());
        ReliableWaitTest.SignalledLock lock = new ReliableWaitTest.SignalledLock(signal, 0);
        RetryPolicy p = RetryPolicy.builder().pollInterval(Duration.ofMillis(pollMs))
                .watchedPollInterval(Duration.ofMillis((long) pollMs * watchedFactor))
                .maxPollInterval(Duration.ofMillis((long) pollMs * watchedFactor))
                .retryTimeout(Duration.ofMillis(timeoutMs)).build();
        assertThatThrownBy(() -> NodeLockAcquirer.create(p).acquire(ReliableWaitTest.NODE, ReliableWaitTest.POD,
                true, List.of(lock))).isInstanceOf(LockWaitTimeoutException.class);
        long deadline = lock.firstAttemptNanos.get() + p.retryTimeout().toNanos();
        List<FakeSignal.Wait> waits = signal.waits();
        assertThat(waits).allSatisfy(w -> {
            assertThat(w.timeoutNanos()).isPositive().isLessThanOrEqualTo(p.pollInterval().toNanos());
            assertThat(w.endNanos()).isLessThanOrEqualTo(deadline);
        });
        Map<Integer, Long> perAttempt = ReliableWaitTest.waitedPerAttempt(waits);
        assertThat(perAttempt.values()).allSatisfy(total ->
                assertThat(total).isLessThanOrEqualTo(p.watchedPollInterval().toNanos()));
    }
}
