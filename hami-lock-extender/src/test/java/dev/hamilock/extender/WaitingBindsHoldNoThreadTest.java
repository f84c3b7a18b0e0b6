package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockOwner;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.extender.v1.ExtenderArgs;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import dev.hamilock.extender.v1.ExtenderJson;
import dev.hamilock.extender.v1.Fixtures;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 3, the storm: 64 gang members bind on one locked node through a server of 32 work
 * threads. While they wait, no thread is inside the acquire loop, a {@code /filter} is answered 200
 * (before: 32 binds held the 32 threads, 32 more filled the queue, the filter got 503 busy), and
 * the live platform threads stay within the server's pools; once the holder releases and a
 * simulated device plugin hands each member's lock on, every bind succeeds. A correctness test with
 * generous caps, no timing assertion.
 */
class WaitingBindsHoldNoThreadTest {
  private static final int MEMBERS = 64;
  private static final String NODE = "node-storm";
  private static final String ACQUIRER = "dev.hamilock.core.acquire.NodeLockAcquirer";

  private final ExecutorService clientThreads = Executors.newFixedThreadPool(4);
  private final HttpClient http =
      HttpClient.newBuilder().executor(clientThreads).connectTimeout(Duration.ofSeconds(5)).build();
  private ExtenderServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    clientThreads.shutdownNow();
  }

  private CompletableFuture<HttpResponse<String>> post(String path, String body) {
    return http.sendAsync(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
            .timeout(Duration.ofSeconds(60))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Threads with a frame of the acquire loop: an attempt in progress, or a blocked wait. */
  private static long threadsInAcquireLoop() {
    return Thread.getAllStackTraces().values().stream()
        .filter(st -> Arrays.stream(st).anyMatch(f -> f.getClassName().startsWith(ACQUIRER)))
        .count();
  }

  /** A gang member asking for 500 MiB and 1% of one card. */
  private static ObjectNode member(TestCluster t, String name) throws Exception {
    ObjectNode pod =
        (ObjectNode) ExtenderJson.readTree(Fixtures.bytes("guide-gang-worker-1.pod.json"));
    ((ObjectNode) pod.get("metadata")).put("name", name).put("uid", "uid-" + name);
    ((ObjectNode) pod.at("/spec/containers/0/resources/limits"))
        .put("nvidia.com/gpumem", "500")
        .put("nvidia.com/gpucores", "1");
    t.cluster.addPod(JsonViews.podView(pod));
    return pod;
  }

  @Test
  void sixtyFourWaitingBindsLeaveTheThirtyTwoWorkThreadsToFilters() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(25));
    // 8 cards of 10 slots: room for the 64 members and the late filter's pod
    StringBuilder cards = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      cards.append("GPU-storm-").append(i).append(",10,46068,100,NVIDIA-NVIDIA A40,0,true:");
    }
    t.cluster.addNode(NodeView.of(NODE, Map.of(TestCluster.NVIDIA_REGISTER, cards.toString())));
    int baseline = Thread.getAllStackTraces().size();
    server = ExtenderServer.builder(t.config, t.extender).start();
    List<String> members = new ArrayList<>();
    for (int i = 0; i < MEMBERS; i++) {
      String m = "storm-" + i;
      members.add(m);
      ObjectNode pod = member(t, m);
      HttpResponse<String> f =
          post("/filter", ExtenderJson.encode(ExtenderArgs.ofNodeNames(pod, List.of(NODE))))
              .get(60, TimeUnit.SECONDS);
      assertThat(f.statusCode()).as(f.body()).isEqualTo(200);
    }
    LockOwner holder = t.holdLock(NODE);
    FairReleaseQueue queue = (FairReleaseQueue) t.nvidiaLock().releaseSignal().orElseThrow();
    List<CompletableFuture<HttpResponse<String>>> binds = new ArrayList<>();
    long cap = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    // two waves of 32, so that the admission bound (32 threads + 32 queued) is not what is tested
    for (int wave = 0; wave < 2; wave++) {
      for (String m : members.subList(wave * 32, wave * 32 + 32)) {
        binds.add(
            post(
                "/bind",
                ExtenderJson.encode(new ExtenderBindingArgs(m, "default", "uid-" + m, NODE))));
      }
      while (queue.queueLength(NODE) < binds.size() && System.nanoTime() < cap) {
        Thread.sleep(5);
      }
    }
    assertThat(queue.queueLength(NODE))
        .as(
            "members queued for the lock; answered: %s",
            binds.stream()
                .filter(CompletableFuture::isDone)
                .map(
                    b ->
                        b.handle(
                                (r, e) ->
                                    e != null ? e.toString() : r.statusCode() + " " + r.body())
                            .join())
                .toList())
        .isEqualTo(MEMBERS);
    // between their brief attempts nobody is in the acquire loop (before: 32 threads blocked in it)
    long fewest = Long.MAX_VALUE;
    int peak = 0;
    for (int i = 0; i < 20 && fewest > 0; i++) {
      fewest = Math.min(fewest, threadsInAcquireLoop());
      peak = Math.max(peak, Thread.getAllStackTraces().size());
      Thread.sleep(10);
    }
    assertThat(fewest).as("threads inside the acquire loop while 64 binds wait").isZero();
    ObjectNode late = member(t, "late-filter");
    HttpResponse<String> filter =
        post("/filter", ExtenderJson.encode(ExtenderArgs.ofNodeNames(late, List.of(NODE))))
            .get(60, TimeUnit.SECONDS);
    assertThat(filter.statusCode())
        .as("a filter while 64 binds wait: %s", filter.body())
        .isEqualTo(200);
    assertThat(binds)
        .as("no bind answered while the lock is held")
        .noneMatch(CompletableFuture::isDone);

    t.nvidiaLock().release(NODE, holder);
    int[] peakSeen = {peak};
    List<HandoffResult> served =
        t.serveLockHolders(
            NODE,
            MEMBERS,
            Duration.ofSeconds(120),
            () -> peakSeen[0] = Math.max(peakSeen[0], Thread.getAllStackTraces().size()));
    assertThat(served)
        .allSatisfy(
            h -> assertThat(h.status()).as(h.reason()).isEqualTo(HandoffResult.Status.COMPLETED));
    peak = peakSeen[0];
    for (CompletableFuture<HttpResponse<String>> b : binds) {
      assertThat(b.get(60, TimeUnit.SECONDS).body()).isEqualTo("{\"Error\":\"\"}");
    }
    assertThat(served).hasSize(MEMBERS);
    assertThat(t.lockHeld(NODE)).as("no lock left").isFalse();
    // the server's pools bound the threads: 32 work + 32 bind-step + 16 I/O + its timer + the
    // lock timer's 2 + the client's 4 and selector, whatever the number of waiting binds
    assertThat(peak)
        .as("peak live threads")
        .isLessThanOrEqualTo(baseline + 32 + 32 + 16 + 1 + 2 + 5);
  }
}
