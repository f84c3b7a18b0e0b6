package dev.hamilock.examples.gang.real;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The real-scheduler harness's {@link PodWatch} on the emulator: what the simulated device plugins,
 * kubelets and the run's timing loop wake on and read (a pod created, bound, marked Running,
 * deleted), and a wait that nothing changed during ends at its timeout with the same count.
 */
class PodWatchTest {
  private static final String NS = "default";

  private ApiServerEmulator k8s;
  private PodWatch pods;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
    k8s.create(pod("before"));
    pods = new PodWatch(k8s.newApiClient(Duration.ofSeconds(10)), NS).start(Duration.ofSeconds(10));
  }

  @AfterEach
  void stop() {
    pods.close();
    k8s.close();
  }

  private static Map<String, Object> pod(String name) {
    return Map.of(
        "apiVersion",
        "v1",
        "kind",
        "Pod",
        "metadata",
        Map.of("name", name, "namespace", NS),
        "spec",
        Map.of("containers", List.of(Map.of("name", "c", "image", "busybox"))));
  }

  /**
   * Waits for changes until {@code done} holds: each wait ends at the next change, or after a
   * minute if no change wakes it (then the test's timeout fails it).
   */
  private long awaitUntil(long seen, Supplier<Boolean> done) throws InterruptedException {
    while (!done.get()) {
      seen = pods.awaitChange(seen, 60_000);
    }
    return seen;
  }

  @Test
  @Timeout(20)
  void aPodsLifeAsThePluginsAndTheRunSeeIt() throws Exception {
    assertThat(pods.pod("before")).as("from the first listing").isPresent();
    long seen = pods.awaitChange(-1, 1_000);

    k8s.create(pod("p"));
    seen = awaitUntil(seen, () -> pods.pod("p").isPresent());
    assertThat(PodWatch.nodeName(pods.pod("p").orElseThrow())).isEmpty();
    assertThat(pods.boundTo("node-a")).isEmpty();

    k8s.mutate(
        "pods",
        NS,
        "p",
        o -> {
          o.withObjectProperty("spec").put("nodeName", "node-a");
          o.withObjectProperty("metadata")
              .withObjectProperty("annotations")
              .put("hami.io/bind-phase", "allocating");
          return o;
        });
    seen = awaitUntil(seen, () -> !pods.boundTo("node-a").isEmpty());
    Map<?, ?> bound = pods.boundTo("node-a").get(0);
    assertThat(PodWatch.name(bound)).isEqualTo("p");
    assertThat(PodWatch.annotation(bound, "hami.io/bind-phase")).isEqualTo("allocating");

    k8s.mutate(
        "pods",
        NS,
        "p",
        o -> {
          o.withObjectProperty("status").put("phase", "Running");
          return o;
        });
    seen = awaitUntil(seen, () -> pods.pod("p").map(PodWatch::phase).orElse("").equals("Running"));

    k8s.delete("pods", NS, "p");
    seen = awaitUntil(seen, () -> pods.pod("p").isEmpty());
    assertThat(pods.pod("before")).as("the others stay").isPresent();

    long now = pods.awaitChange(Long.MIN_VALUE, 0); // the count now, at once
    assertThat(now).as("a listing and four events").isGreaterThanOrEqualTo(5);
    assertThat(pods.awaitChange(now, 50)).as("nothing changed: the same count").isEqualTo(now);
    assertThat(pods.pod("gone")).isEqualTo(Optional.empty());
  }
}
