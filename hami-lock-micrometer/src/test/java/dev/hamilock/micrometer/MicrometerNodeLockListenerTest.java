package dev.hamilock.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.StoreNodeLock;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class MicrometerNodeLockListenerTest {

  @Test
  void listenerCallsBecomePrometheusSeriesWithoutNodeNames() {
    PrometheusMeterRegistry reg = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    NodeLockListener l = new MicrometerNodeLockListener(reg);
    LockOwner a = LockOwner.of("default", "a", "uid-a");
    l.acquired("node-1", "hami.io/mutex.lock", a, AcquireOutcome.ACQUIRED);
    l.acquired("node-2", "hami.io/mutex.lock", a, AcquireOutcome.TOOK_OVER_DANGLING);
    l.takenOver("node-2", "hami.io/mutex.lock", a, "old", AcquireOutcome.TOOK_OVER_DANGLING);
    l.takenOver("node-3", "hami.io/mutex.lock", a, "old", AcquireOutcome.TOOK_OVER_EXPIRED);
    l.released("node-1", "hami.io/mutex.lock", a);
    l.waited("node-1", a, Duration.ofMillis(1500), 15, true);
    l.waited("node-1", a, Duration.ofSeconds(28), 280, false);
    String text = reg.scrape();
    assertThat(text)
        .contains("hami_lock_acquired_total{key=\"hami.io/mutex.lock\",outcome=\"acquired\"} 1.0")
        .contains("hami_lock_takeovers_total{key=\"hami.io/mutex.lock\",reason=\"dangling\"} 1.0")
        .contains("hami_lock_takeovers_total{key=\"hami.io/mutex.lock\",reason=\"expired\"} 1.0")
        .contains("hami_lock_released_total{key=\"hami.io/mutex.lock\"} 1.0")
        .contains("hami_lock_wait_seconds_sum{acquired=\"true\"} 1.5")
        .contains("hami_lock_wait_seconds_count{acquired=\"false\"} 1")
        .contains("hami_lock_wait_attempts_sum{acquired=\"false\"} 280.0")
        .doesNotContain("node-1");
  }

  @Test
  void aRealLockFeedsContentionAndAcquisitions() throws Exception {
    PrometheusMeterRegistry reg = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    InMemoryLockStore store = new InMemoryLockStore();
    NodeLock lock =
        StoreNodeLock.create(
            store,
            LockSettings.builder()
                .key("hami.io/mutex.lock")
                .listener(new MicrometerNodeLockListener(reg))
                .build());
    LockOwner a = LockOwner.of("default", "a", "uid-a");
    LockOwner b = LockOwner.of("default", "b", "uid-b");
    lock.acquire("node-1", a);
    try {
      lock.acquire("node-1", b);
    } catch (dev.hamilock.core.LockContentionException expected) {
      // b found a's lock
    }
    lock.release("node-1", a);
    assertThat(reg.get("hami.lock.acquired").tag("outcome", "acquired").counter().count())
        .isEqualTo(1);
    assertThat(reg.get("hami.lock.contention").counter().count()).isEqualTo(1);
    assertThat(reg.get("hami.lock.released").counter().count()).isEqualTo(1);
  }
}
