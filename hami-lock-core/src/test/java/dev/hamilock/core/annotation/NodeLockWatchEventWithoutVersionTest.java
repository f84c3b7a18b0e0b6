package dev.hamilock.core.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.WaitClock;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A MODIFIED event whose node object carries no {@code metadata.resourceVersion} is a change of the
 * node, never its deletion: the held lock it shows stays held in the view. Since the watch passed
 * the event's version as "null: deleted", such an event dropped every lock value of the node (the
 * view showed a held lock free) and woke all its waiters.
 */
class NodeLockWatchEventWithoutVersionTest {
  private static final String KEY = "hami.io/mutex.lock";

  @Test
  void aModifiedEventWithoutAVersionKeepsTheHeldLock() throws Exception {
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Map<String, Map<?, ?>> objects =
        Map.of(
            "modified-no-version",
            Map.of(
                "type",
                "MODIFIED",
                "object",
                Map.of(
                    "metadata",
                    Map.of("name", "n1", "annotations", Map.of(KEY, "2026-01-01T00:00:00Z,p")))),
            "marker",
            Map.of(
                "type",
                "MODIFIED",
                "object",
                Map.of("metadata", Map.of("name", "n2", "resourceVersion", "12"))));
    AbstractNodeLockWatch watch =
        new AbstractNodeLockWatch(
            r -> {
              Thread t = new Thread(r, "test-node-lock-watch");
              t.setDaemon(true);
              return t;
            },
            WaitClock.SYSTEM,
            Duration.ofSeconds(60)) {
          @Override
          protected Page listPage(String continueToken) {
            return new Page(
                Map.of("n1", Map.of(KEY, "2026-01-01T00:00:00Z,p"), "n2", Map.of()), "10", null);
          }

          @Override
          protected LineStream open(String resourceVersion, long timeoutSeconds) {
            return new LineStream() {
              @Override
              public String readLine() throws IOException {
                try {
                  return lines.take();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  throw new IOException("interrupted", e);
                }
              }

              @Override
              public void close() {
                lines.offer("");
              }
            };
          }

          @Override
          protected Map<?, ?> parseObject(String json) {
            return objects.get(json);
          }

          @Override
          protected boolean isGone(Exception failure) {
            return false;
          }
        };
    watch.releaseSignal(KEY);
    watch.start();
    try {
      assertThat(watch.awaitSynced(Duration.ofSeconds(10))).isTrue();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!watch.isConnected() && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(watch.observedLockValue("n1", KEY)).as("listed").isPresent();
      lines.add("modified-no-version");
      lines.add("marker");
      while (watch.observedFreeVersion("n2", KEY).isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(watch.observedFreeVersion("n2", KEY)).as("the marker event").contains("12");
      assertThat(watch.observedLockValue("n1", KEY))
          .as("n1's lock after a MODIFIED event showing it held, without a resourceVersion")
          .contains("2026-01-01T00:00:00Z,p");
      assertThat(watch.releaseCount()).as("releases seen").isZero();
    } finally {
      watch.close();
    }
  }
}
