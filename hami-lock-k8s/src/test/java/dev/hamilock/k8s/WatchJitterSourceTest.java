package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.NodeLock;
import dev.hamilock.core.WaitClock;
import dev.hamilock.k8s.watch.NodeLockWatch;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The node watch takes its jitter (reconnect back-off, the watch request's {@code timeoutSeconds}
 * spread) from the injected {@link WaitClock}, the acquire loop's seam, not from a thread-bound
 * random source: the watch of a 10 s timeout asks the injected clock for a value below 2 (10 s + up
 * to 10 %) for its watch request.
 */
class WatchJitterSourceTest extends OnSharedEmulator {

  @Test
  void theWatchRequestsTimeoutSpreadComesFromTheInjectedWaitClock() throws Exception {
    List<Long> bounds = new CopyOnWriteArrayList<>();
    WaitClock recording =
        new WaitClock() {
          @Override
          public long nanoTime() {
            return WaitClock.SYSTEM.nanoTime();
          }

          @Override
          public void sleepNanos(long nanos) throws InterruptedException {
            WaitClock.SYSTEM.sleepNanos(nanos);
          }

          @Override
          public long randomBelow(long bound) {
            bounds.add(bound);
            return 0;
          }
        };
    try (NodeLockWatch watch =
        NodeLockWatch.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .watchTimeout(Duration.ofSeconds(10))
            .waitClock(recording)
            .build()) {
      watch.releaseSignal(NodeLock.DEFAULT_KEY);
      watch.start();
      assertThat(watch.awaitSynced(Duration.ofSeconds(10))).isTrue();
      long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (bounds.isEmpty() && System.nanoTime() < end) {
        Thread.sleep(5); // the watch request follows the LIST on the watch thread
      }
      assertThat(bounds).as("bounds asked of the injected clock").contains(2L);
    }
  }
}
