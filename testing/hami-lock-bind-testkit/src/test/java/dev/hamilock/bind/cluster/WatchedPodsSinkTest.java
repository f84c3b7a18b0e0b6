package dev.hamilock.bind.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.WaitClock;
import dev.hamilock.core.watch.ListAndWatch;
import dev.hamilock.device.spi.HamiAnnotations;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link WatchedPods#sink()} fed by core's {@link ListAndWatch} over a scripted transport (pages by
 * continue token, stream lines from a queue): the store's invariant (exactly the cluster's
 * annotated pods as of {@link WatchedPods#version()}) and its promise to become usable again at
 * "the loop's next listing".
 */
class WatchedPodsSinkTest {

  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final Map<String, Map<?, ?>> events = new HashMap<>();
  private final AtomicInteger listings = new AtomicInteger(); // first pages requested
  private final AtomicReference<Thread> thread = new AtomicReference<>();
  private ListAndWatch watch;

  @AfterEach
  void stop() {
    if (watch != null) {
      watch.close();
    }
  }

  /**
   * A listing cut short by close() between two pages must not reach the store: the sink would hold
   * page 1 only, at the list's version, and answer a bind's re-fit without page 2's pods (GPU
   * over-commit). Here close() lands as page 1 comes back (called on the watch thread, so that no
   * interrupt is involved: the same state as a close() from another thread at that moment). Fixed:
   * ListAndWatch fails a listing closed between pages instead of handing over its part.
   */
  @Test
  void aListingCutShortByCloseNeverReachesTheStore() throws Exception {
    WatchedPods pods = new WatchedPods();
    Map<String, Map<?, ?>> pages =
        Map.of(
            "",
                Map.of(
                    "metadata",
                    Map.of("resourceVersion", "10", "continue", "page2"),
                    "items",
                    List.of(pod("a", "n1", "5"))),
            "page2",
                Map.of(
                    "metadata",
                    Map.of("resourceVersion", "10"),
                    "items",
                    List.of(pod("b", "n1", "6"))));
    watch =
        watch(
            pods,
            cont -> {
              if (cont == null) {
                watch.close(); // closed as the first page came back
              }
              return pages.get(cont == null ? "" : cont);
            });
    watch.start();
    awaitThreadEnd();

    Optional<List<ClusterPod>> held = pods.assignedTo("n1", "10", Duration.ZERO);
    assertThat(held.map(WatchedPodsSinkTest::names))
        .as("n1's pods at version 10 (a and b are both assigned to it at 10), or no answer")
        .satisfiesAnyOf(
            h -> assertThat(h).isEmpty(), h -> assertThat(h).contains(List.of("a", "b")));
    assertThat(pods.version()).as("version after a listing cut short").isEqualTo(-1);
  }

  /**
   * The sink's Javadoc: "A pod the views refuse makes the store unusable until the loop's next
   * listing". The sink calls lost() and answers true, so the loop never lists again on its own (a
   * normally ended stream resumes from RV; only ERROR/410 relist): one refused pod disables the
   * store for good, and every bind's re-fit falls back to a LIST, even after the pod is gone.
   * Fixed: the sink refuses events while the store is unusable, so the loop lists again (here with
   * no gap between listings; {@link #aPodThatStaysUnreadableListsAtMostOncePerGap} for the
   * default).
   */
  @Test
  void aRefusedPodMakesTheLoopListAgain() throws Exception {
    WatchedPods pods = new WatchedPods();
    Map<String, Object> refused = new HashMap<>(pod("bad", "n1", "11"));
    refused.put("spec", Map.of("priority", "high")); // the views refuse a non-integer priority
    events.put("refused", Map.of("type", "ADDED", "object", refused));
    watch =
        watch(
            pods,
            cont -> {
              int n = listings.incrementAndGet();
              String version = n == 1 ? "10" : "13";
              List<Map<?, ?>> items = n == 1 ? List.of() : List.of(pod("good", "n1", "13"));
              return Map.of("metadata", Map.of("resourceVersion", version), "items", items);
            });
    watch.start();
    await(() -> pods.version() == 10, "listed at 10");
    lines.add("refused");
    await(() -> pods.version() == -1, "the refused pod makes the store unusable");
    // the cluster meanwhile: the refused pod gone, "good" added (what a listing now shows)
    await(
        () -> pods.version() >= 13,
        "the store usable again after the loop's next listing (listings: " + listings + ")");
    assertThat(pods.assignedTo("n1", "13", Duration.ZERO).map(WatchedPodsSinkTest::names))
        .contains(List.of("good"));
  }

  /**
   * A pod that stays unreadable asks for a listing at most once per gap (a LIST of all pods each
   * time), not once per back-off: with the default minute, the events after the refusal list
   * nothing (without the gap each would list again, 100 ms to 5 s apart).
   */
  @Test
  void aPodThatStaysUnreadableListsAtMostOncePerGap() throws Exception {
    WatchedPods pods = new WatchedPods();
    Map<String, Object> refused = new HashMap<>(pod("bad", "n1", "11"));
    refused.put("spec", Map.of("priority", "high"));
    events.put("refused", Map.of("type", "ADDED", "object", refused));
    for (int v = 12; v <= 15; v++) {
      events.put("good-" + v, Map.of("type", "MODIFIED", "object", pod("good", "n1", "" + v)));
    }
    watch =
        watch(
            pods,
            pods.sink(),
            cont -> {
              listings.incrementAndGet();
              return Map.of("metadata", Map.of("resourceVersion", "10"), "items", List.of());
            });
    watch.start();
    await(() -> pods.version() == 10, "listed at 10");
    lines.addAll(List.of("refused", "good-12", "good-13", "good-14", "good-15"));
    await(
        () -> lines.isEmpty() && thread.get().getState() == Thread.State.WAITING,
        "every event taken, the watch thread waiting for the next");
    assertThat(pods.version()).as("unusable after the refused pod").isEqualTo(-1);
    assertThat(listings).as("listings").hasValue(1);
  }

  private ListAndWatch watch(WatchedPods pods, Function<String, Map<?, ?>> listPage) {
    return watch(pods, pods.sink(Duration.ZERO), listPage);
  }

  private ListAndWatch watch(
      WatchedPods pods, ListAndWatch.Sink sink, Function<String, Map<?, ?>> listPage) {
    ListAndWatch.Transport transport =
        new ListAndWatch.Transport() {
          @Override
          public Map<?, ?> listPage(String path, String continueToken) {
            return listPage.apply(continueToken);
          }

          @Override
          public ListAndWatch.LineStream watch(String path, String rv, long timeoutSeconds) {
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
            return events.get(json);
          }

          @Override
          public boolean isGone(Exception failure) {
            return false;
          }
        };
    return new ListAndWatch(
        "pod watch",
        "/api/v1/pods",
        transport,
        sink,
        r -> {
          Thread t = new Thread(r, "test-pod-watch");
          t.setDaemon(true);
          thread.set(t);
          return t;
        },
        WaitClock.SYSTEM,
        Duration.ofSeconds(60));
  }

  private void awaitThreadEnd() throws InterruptedException {
    Thread t = thread.get();
    assertThat(t).isNotNull();
    t.join(10_000);
    assertThat(t.isAlive()).as("watch thread ended within 10 s").isFalse();
  }

  private static Map<String, Object> pod(String name, String node, String version) {
    return Map.of(
        "metadata",
        Map.of(
            "name",
            name,
            "namespace",
            "ns",
            "resourceVersion",
            version,
            "annotations",
            Map.of(HamiAnnotations.VGPU_NODE, node)),
        "spec",
        Map.of("nodeName", node));
  }

  private static List<String> names(List<ClusterPod> pods) {
    return pods.stream().map(p -> p.view().name()).toList();
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(condition.getAsBoolean()).as(what + ", within 5 s").isTrue();
  }
}
