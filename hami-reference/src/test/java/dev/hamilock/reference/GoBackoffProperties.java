package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;

/** Spec §1.10: HAMi's inner retry policy, retry.OnError with wait.Backoff{5, 100ms, 2.0, 0.5}. */
class GoBackoffProperties {

    @Property(tries = 100)
    void sleepsFollowTheJitteredDoublingAndAttemptsStopAtFive(@ForAll @DoubleRange(min = 0.0, max = 0.99) double u) throws Exception {
        List<Duration> sleeps = new ArrayList<>();
        AtomicInteger attempts = new AtomicInteger();
        ApiException last = new ApiException(409, "conflict 5");
        Exception result = new GoBackoff(sleeps::add, () -> u).onError(() -> {
            int n = attempts.incrementAndGet();
            throw n == 5 ? last : new ApiException(409, "conflict " + n);
        }, e -> true);

        assertThat(attempts).hasValue(5);
        assertThat(result).isSameAs(last);
        assertThat(sleeps).hasSize(4);
        long[] base = {100, 200, 400, 800};
        for (int i = 0; i < 4; i++) {
            long nanos = sleeps.get(i).toNanos();
            assertThat(nanos).isGreaterThanOrEqualTo(base[i] * 1_000_000L).isLessThan(base[i] * 1_500_000L);
            assertThat(nanos).isEqualTo(base[i] * 1_000_000L + (long) (u * 0.5 * base[i] * 1_000_000L));
        }
    }

    @Property(tries = 50)
    void aRejectedErrorIsReturnedAtOnceAndSuccessStopsTheLoop(@ForAll @IntRange(min = 1, max = 5) int failAt,
            @ForAll boolean rejected) throws Exception {
        List<Duration> sleeps = new ArrayList<>();
        AtomicInteger attempts = new AtomicInteger();
        HamiException contention = new HamiLockContentionException("node n is locked");
        Exception result = new GoBackoff(sleeps::add, () -> 0.0).onError(() -> {
            int n = attempts.incrementAndGet();
            if (n < failAt) {
                throw new ApiException(500, "boom");
            }
            if (rejected) {
                throw contention;
            }
        }, e -> !HamiLockContentionException.isContention(e));

        assertThat(attempts).hasValue(failAt);
        assertThat(sleeps).hasSize(failAt - 1);
        if (rejected) {
            assertThat(result).isSameAs(contention);
        } else {
            assertThat(result).isNull();
        }
    }
}
