package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockOwner;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.extender.v1.ExtenderArgs;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import dev.hamilock.extender.v1.ExtenderBindingResult;
import dev.hamilock.extender.v1.ExtenderFilterResult;
import dev.hamilock.extender.v1.ExtenderJson;
import dev.hamilock.extender.v1.Fixtures;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** End-to-end through the real HTTP server with java.net.http.HttpClient. */
class ExtenderServerTest {
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final List<ExtenderServer> servers = new ArrayList<>();

  @AfterEach
  void stop() {
    servers.forEach(ExtenderServer::close);
  }

  private ExtenderServer start(TestCluster t) throws Exception {
    ExtenderServer s = ExtenderServer.builder(t.config, t.extender).start();
    servers.add(s);
    return s;
  }

  private HttpResponse<String> post(ExtenderServer s, String path, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(ExtenderServer s, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
            .timeout(Duration.ofSeconds(10))
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void filterThenBindOverHttp() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ExtenderServer s = start(t);
    ObjectNode pod = t.addGangWorker("w1", 3000);
    HttpResponse<String> f =
        post(
            s,
            "/filter",
            ExtenderJson.encode(
                ExtenderArgs.ofNodeNames(pod, List.of("node-a", "node-b", "node-c"))));
    assertThat(f.statusCode()).isEqualTo(200);
    assertThat(f.headers().firstValue("Content-Type")).contains("application/json");
    ExtenderFilterResult fr = ExtenderJson.decodeFilterResult(Fixtures.utf8(f.body()));
    assertThat(fr.error()).isEmpty();
    assertThat(fr.nodeNames()).hasValueSatisfying(n -> assertThat(n).hasSize(1));
    assertThat(f.body()).startsWith("{\"Nodes\":null,\"NodeNames\":[\"");
    String node = fr.nodeNames().orElseThrow().get(0);

    HttpResponse<String> b =
        post(
            s,
            "/bind",
            ExtenderJson.encode(new ExtenderBindingArgs("w1", "default", "uid-w1", node)));
    assertThat(b.statusCode()).isEqualTo(200);
    assertThat(b.body()).isEqualTo(Fixtures.text("F-82-binding-result-ok.json"));
    assertThat(t.cluster.readPod("default", "w1").orElseThrow().nodeName()).contains(node);
  }

  @Test
  void recordedBodiesGetHamisAnswersWithHttp200() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ExtenderServer s = start(t);
    for (String f : List.of("F-81-filter-args-no-pod.json", "F-81-filter-args-null-pod.json")) {
      HttpResponse<String> r = post(s, "/filter", Fixtures.text(f));
      assertThat(r.statusCode()).as(f).isEqualTo(200);
      assertThat(r.body()).as(f).isEqualTo(Fixtures.text("F-82-filter-result-error.json"));
    }
    HttpResponse<String> r = post(s, "/bind", Fixtures.text("F-82-binding-args.json"));
    assertThat(r.statusCode()).isEqualTo(200);
    ExtenderBindingResult br = ExtenderJson.decodeBindingResult(Fixtures.utf8(r.body()));
    assertThat(br.error()).contains("gpu-test-6f58db7c7c-nszdp").contains("not found");
  }

  @Test
  void malformedRequestsGetHttpErrorsWithAMessage() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ExtenderServer s = start(t);
    HttpResponse<String> bad = post(s, "/filter", "{\"Pod\":");
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.body()).contains("malformed JSON");
    HttpResponse<String> wrongType = post(s, "/bind", "{\"PodName\":7}");
    assertThat(wrongType.statusCode()).isEqualTo(400);
    assertThat(wrongType.body()).contains("ExtenderBindingArgs.PodName");
    HttpResponse<String> empty = post(s, "/bind", "");
    assertThat(empty.statusCode()).isEqualTo(400);
    assertThat(empty.body()).isEqualTo("Please send a request body");
    HttpResponse<String> method = get(s, "/filter");
    assertThat(method.statusCode()).isEqualTo(405);
    assertThat(method.headers().firstValue("Allow")).contains("POST");
    assertThat(get(s, "/prioritize").statusCode()).isEqualTo(404);
  }

  @Test
  void healthAndReadiness() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(5));
    ExtenderServer s = start(t);
    assertThat(get(s, "/healthz").statusCode()).isEqualTo(200);
    assertThat(get(s, "/readyz").body()).isEqualTo("ok");
    ExtenderServer notReady =
        ExtenderServer.builder(t.config, t.extender).ready(() -> false).start();
    servers.add(notReady);
    assertThat(notReady.port()).isNotEqualTo(s.port());
    HttpResponse<String> r = get(notReady, "/readyz");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(get(notReady, "/healthz").statusCode()).isEqualTo(200);
  }

  @Test
  void guideGangBindsThroughHttpOnceTheLockHolderReleasesWithoutOverlap() throws Exception {
    TestCluster t = new TestCluster(Duration.ofSeconds(25));
    ExtenderServer s = start(t);
    List<String> members =
        List.of("gang-worker-1", "gang-worker-2", "gang-worker-3", "gang-worker-4");
    for (String m : members) {
      ObjectNode pod = t.addGangWorker(m, 3000);
      HttpResponse<String> f =
          post(s, "/filter", ExtenderJson.encode(ExtenderArgs.ofNodeNames(pod, List.of("node-a"))));
      assertThat(ExtenderJson.decodeFilterResult(Fixtures.utf8(f.body())).nodeNames())
          .contains(List.of("node-a"));
    }
    LockOwner holder = t.holdLock("node-a");
    long readsBefore = t.cluster.operationCount(InMemoryCluster.Operation.LOCK_READ);
    List<CompletableFuture<HttpResponse<String>>> binds = new ArrayList<>();
    for (String m : members) {
      binds.add(
          http.sendAsync(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/bind"))
                  .timeout(Duration.ofSeconds(30))
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          ExtenderJson.encode(
                              new ExtenderBindingArgs(m, "default", "uid-" + m, "node-a"))))
                  .build(),
              HttpResponse.BodyHandlers.ofString()));
    }
    // every member is waiting (gang retry) while the holder has the lock: wait until the lock
    // has been read at least three times per member, then check that nobody got through
    long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (t.cluster.operationCount(InMemoryCluster.Operation.LOCK_READ)
            < readsBefore + 3L * members.size()
        && System.nanoTime() < waitUntil) {
      Thread.sleep(2);
    }
    assertThat(t.cluster.operationCount(InMemoryCluster.Operation.LOCK_READ))
        .isGreaterThanOrEqualTo(readsBefore + 3L * members.size());
    assertThat(CompletableFuture.anyOf(binds.toArray(CompletableFuture[]::new)))
        .as("no member binds while the lock is held")
        .isNotDone();
    t.nvidiaLock().release("node-a", holder);
    List<HandoffResult> served =
        t.serveLockHolders("node-a", members.size(), Duration.ofSeconds(30), () -> {});
    assertThat(served)
        .allSatisfy(
            h -> {
              assertThat(h.status()).as(h.reason()).isEqualTo(HandoffResult.Status.COMPLETED);
              assertThat(h.lockReleased()).isTrue();
            });
    for (CompletableFuture<HttpResponse<String>> b : binds) {
      assertThat(b.get(30, TimeUnit.SECONDS).body()).isEqualTo("{\"Error\":\"\"}");
    }
    assertThat(served).hasSize(members.size());
    assertThat(t.lockHeld("node-a")).as("no lock left").isFalse();
    // no overlap: per GPU, the bound members' memory stays within 46068 MiB and 100 cores
    java.util.Map<String, int[]> perGpu = new java.util.HashMap<>();
    for (String m : members) {
      assertThat(t.cluster.readPod("default", m).orElseThrow().nodeName()).contains("node-a");
      String alloc = t.pod(m).annotations().get("hami.io/vgpu-devices-allocated");
      for (String e : alloc.replace(";", "").split(":")) {
        if (e.isEmpty()) {
          continue;
        }
        String[] p = e.split(",");
        int[] sum = perGpu.computeIfAbsent(p[0], k -> new int[2]);
        sum[0] += Integer.parseInt(p[2]);
        sum[1] += Integer.parseInt(p[3]);
      }
      assertThat(t.pod(m).annotations()).containsEntry(HamiAnnotations.VGPU_NODE, "node-a");
    }
    assertThat(perGpu.values())
        .allSatisfy(
            v -> {
              assertThat(v[0]).isLessThanOrEqualTo(46068);
              assertThat(v[1]).isLessThanOrEqualTo(100);
            });
    assertThat(perGpu.values().stream().mapToInt(v -> v[0]).sum()).isEqualTo(4 * 3000);
  }
}
