package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.doubles;

import dev.hamilock.testing.generators.Props;
import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Spec §1.10: HAMi's inner retry policy, retry.OnError with wait.Backoff{5, 100ms, 2.0, 0.5}. */
class GoBackoffProperties {

  /** 100 jitter draws u in [0, 0.99]. */
  @Test
  void sleepsFollowTheJitteredDoublingAndAttemptsStopAtFive() {
    Props.qt(100)
        .forAll(doubles().between(0.0, 0.99))
        .checkAssert(u -> Props.unchecked(() -> sleepsFollow(u)));
  }

  private static void sleepsFollow(double u) throws Exception {
    List<Duration> sleeps = new ArrayList<>();
    AtomicInteger attempts = new AtomicInteger();
    ApiException last = new ApiException(409, "conflict 5");
    Exception result =
        new GoBackoff(sleeps::add, () -> u)
            .onError(
                () -> {
                  int n = attempts.incrementAndGet();
                  throw n == 5 ? last : new ApiException(409, "conflict " + n);
                },
                e -> true);

    assertThat(attempts).hasValue(5);
    assertThat(result).isSameAs(last);
    assertThat(sleeps).hasSize(4);
    long[] base = {100, 200, 400, 800};
    for (int i = 0; i < 4; i++) {
      long nanos = sleeps.get(i).toNanos();
      assertThat(nanos)
          .isGreaterThanOrEqualTo(base[i] * 1_000_000L)
          .isLessThan(base[i] * 1_500_000L);
      assertThat(nanos).isEqualTo(base[i] * 1_000_000L + (long) (u * 0.5 * base[i] * 1_000_000L));
    }
  }

  /** All 10 cases (failing attempts before the last 1–5, rejected or succeeding), enumerated. */
  @Test
  void aRejectedErrorIsReturnedAtOnceAndSuccessStopsTheLoop() throws Exception {
    for (int failAt = 1; failAt <= 5; failAt++) {
      for (boolean rejected : new boolean[] {false, true}) {
        try {
          rejectedOrSucceeded(failAt, rejected);
        } catch (AssertionError e) {
          throw new AssertionError(
              "failAt=" + failAt + ", rejected=" + rejected + ": " + e.getMessage(), e);
        }
      }
    }
  }

  private static void rejectedOrSucceeded(int failAt, boolean rejected) throws Exception {
    List<Duration> sleeps = new ArrayList<>();
    AtomicInteger attempts = new AtomicInteger();
    HamiException contention = new HamiLockContentionException("node n is locked");
    Exception result =
        new GoBackoff(sleeps::add, () -> 0.0)
            .onError(
                () -> {
                  int n = attempts.incrementAndGet();
                  if (n < failAt) {
                    throw new ApiException(500, "boom");
                  }
                  if (rejected) {
                    throw contention;
                  }
                },
                e -> !HamiLockContentionException.isContention(e));

    assertThat(attempts).hasValue(failAt);
    assertThat(sleeps).hasSize(failAt - 1);
    if (rejected) {
      assertThat(result).isSameAs(contention);
    } else {
      assertThat(result).isNull();
    }
  }
}
