package dev.hamilock.core.annotation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.WaitClock;
import dev.hamilock.core.watch.ListAndWatch;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The node lock watch's per-node versions ({@link AbstractNodeLockWatch#observedFreeVersion}),
 * event by event, on a scripted stream. A MODIFIED event whose node object carries no {@code
 * metadata.resourceVersion} is a change of the node, never its deletion: the held lock it shows
 * stays held in the view. Since the watch passed the event's version as "null: deleted", such an
 * event dropped every lock value of the node (the view showed a held lock free) and woke all its
 * waiters.
 */
class NodeLockWatchEventWithoutVersionTest {
  private static final String KEY = "hami.io/mutex.lock";
  private static final String HELD = "2026-01-01T00:00:00Z,p";

  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final Map<String, Map<?, ?>> objects = new HashMap<>();

  @Test
  void aModifiedEventWithoutAVersionKeepsTheHeldLock() throws Exception {
    event("modified-no-version", "MODIFIED", "n1", null, Map.of(KEY, HELD));
    event("marker", "MODIFIED", "n2", "12", Map.of());
    AbstractNodeLockWatch watch = started();
    try {
      assertThat(watch.observedLockValue("n1", KEY)).as("listed").isPresent();
      lines.add("modified-no-version");
      lines.add("marker");
      await(() -> watch.observedFreeVersion("n2", KEY).isPresent());
      assertThat(watch.observedFreeVersion("n2", KEY)).as("the marker event").contains("12");
      assertThat(watch.observedLockValue("n1", KEY))
          .as("n1's lock after a MODIFIED event showing it held, without a resourceVersion")
          .contains(HELD);
      assertThat(watch.releaseCount()).as("releases seen").isZero();
    } finally {
      watch.close();
    }
  }

  @Test
  void aNodeDeletedAndCreatedAgainHasTheVersionsOfItsEventsOnly() throws Exception {
    event("bookmark", "BOOKMARK", null, "13", Map.of());
    event("free", "MODIFIED", "n2", "14", Map.of());
    event("deleted", "DELETED", "n2", "15", Map.of());
    event("added-held", "ADDED", "n2", "16", Map.of(KEY, HELD));
    event("released", "MODIFIED", "n2", "17", Map.of());
    event("marker", "MODIFIED", "n3", "18", Map.of());
    AbstractNodeLockWatch watch = started();
    try {
      assertThat(watch.observedFreeVersion("n2", KEY)).as("listed: no event yet").isEmpty();
      lines.add("bookmark");
      lines.add("free");
      await(() -> watch.observedFreeVersion("n2", KEY).isPresent());
      assertThat(watch.observedFreeVersion("n2", KEY)).contains("14");
      lines.add("deleted");
      await(() -> watch.observedFreeVersion("n2", KEY).isEmpty());
      lines.add("added-held");
      await(() -> watch.observedLockValue("n2", KEY).isPresent());
      assertThat(watch.observedFreeVersion("n2", KEY)).as("created again, held").isEmpty();
      lines.add("released");
      lines.add("marker");
      await(() -> watch.observedFreeVersion("n3", KEY).isPresent());
      assertThat(watch.observedFreeVersion("n2", KEY)).as("released").contains("17");
      assertThat(watch.releaseCount()).isEqualTo(1);
    } finally {
      watch.close();
    }
  }

  private void event(
      String line, String type, String node, String version, Map<String, String> annotations) {
    Map<String, Object> meta = new HashMap<>();
    if (node != null) {
      meta.put("name", node);
    }
    if (version != null) {
      meta.put("resourceVersion", version);
    }
    meta.put("annotations", annotations);
    objects.put(line, Map.of("type", type, "object", Map.of("metadata", meta)));
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(condition.getAsBoolean()).as("within 10 s").isTrue();
  }

  /** A watch of {@link #KEY} listing n1 (held), n2 and n3 (free), then streaming {@link #lines}. */
  private AbstractNodeLockWatch started() throws InterruptedException {
    ListAndWatch.Transport transport =
        new ListAndWatch.Transport() {
          @Override
          public Map<?, ?> listPage(String path, String continueToken) {
            return Map.of(
                "metadata",
                Map.of("resourceVersion", "10"),
                "items",
                List.of(node("n1", Map.of(KEY, HELD)), node("n2", Map.of()), node("n3", Map.of())));
          }

          @Override
          public ListAndWatch.LineStream watch(
              String path, String resourceVersion, long timeoutSeconds) {
            return new ListAndWatch.LineStream() {
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
          public Map<?, ?> parseObject(String json) {
            return objects.get(json);
          }

          @Override
          public boolean isGone(Exception failure) {
            return false;
          }
        };
    AbstractNodeLockWatch watch =
        new AbstractNodeLockWatch(
            transport,
            r -> {
              Thread t = new Thread(r, "test-node-lock-watch");
              t.setDaemon(true);
              return t;
            },
            WaitClock.SYSTEM,
            Duration.ofSeconds(60)) {};
    watch.releaseSignal(KEY);
    watch.start();
    assertThat(watch.awaitSynced(Duration.ofSeconds(10))).isTrue();
    await(watch::isConnected);
    return watch;
  }

  private static Map<String, Object> node(String name, Map<String, String> annotations) {
    return Map.of("metadata", Map.of("name", name, "annotations", annotations));
  }
}
