package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.testkit.ApiServerEmulator;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class GoClientRateLimitTest {

  /**
   * x/time/rate semantics at HAMi's defaults: 10 at once, then one every 200 ms, refill capped at
   * the burst.
   */
  @Test
  void aFullBucketOfTenThenOneTokenEvery200Ms() {
    AtomicLong now = new AtomicLong(1_000_000_000L);
    GoClientRateLimit limit = new GoClientRateLimit(5, 10, now::get, d -> {});
    List<Long> waits = new ArrayList<>();
    for (int i = 0; i < 13; i++) {
      waits.add(limit.reserve().toMillis());
    }
    assertThat(waits).containsExactly(0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 200L, 400L, 600L);
    now.addAndGet(Duration.ofSeconds(60).toNanos()); // a long pause refills to the burst only
    List<Long> after = new ArrayList<>();
    for (int i = 0; i < 11; i++) {
      after.add(limit.reserve().toMillis());
    }
    assertThat(after.subList(0, 10)).containsOnly(0L);
    assertThat(after.get(10)).isEqualTo(200L);
  }

  @Test
  void badSettingsAreRefusedByName() {
    assertThatThrownBy(() -> new GoClientRateLimit(0, 10, System::nanoTime, Sleeper.REAL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("qps")
        .hasMessageContaining("0.0");
    assertThatThrownBy(() -> new GoClientRateLimit(Double.NaN, 10, System::nanoTime, Sleeper.REAL))
        .hasMessageContaining("NaN");
    assertThatThrownBy(() -> new GoClientRateLimit(5, 0, System::nanoTime, Sleeper.REAL))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("burst")
        .hasMessageContaining("0");
  }

  /**
   * On the ApiClient HamiNodeLock uses, every request takes a token: two uncontended lock + release
   * rounds (14 requests) with burst 2 and a clock that does not move reserve exactly 12 waits of
   * 200, 400, ... ms (the recording sleeper does not sleep).
   */
  @Test
  void installedOnTheClientEveryHamiNodeLockRequestTakesAToken() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      k8s.createNode("n1", Map.of());
      k8s.createNamespace("ns");
      k8s.createPod("ns", "p", Map.of());
      ApiClient client = k8s.newApiClient(Duration.ofSeconds(10));
      List<Duration> waits = new ArrayList<>();
      GoClientRateLimit limit = new GoClientRateLimit(5, 2, () -> 0L, waits::add);
      client.setHttpClient(client.getHttpClient().newBuilder().addInterceptor(limit).build());
      HamiNodeLock lock = HamiNodeLock.builder(client).build();
      k8s.resetCounters();
      for (int i = 0; i < 2; i++) {
        lock.lockNode("n1", "ns", "p");
        lock.releaseNodeLock("n1", "ns", "p", false);
      }
      assertThat(k8s.totalRequests()).isEqualTo(14);
      assertThat(waits).hasSize(12);
      for (int i = 0; i < waits.size(); i++) {
        assertThat(waits.get(i)).isEqualTo(Duration.ofMillis(200L * (i + 1)));
      }
    }
  }
}
