package dev.hamilock.examples.extender;

import static dev.hamilock.examples.extender.ExtenderFixtures.fixture;
import static dev.hamilock.examples.extender.ExtenderFixtures.seed;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.extender.v1.ExtenderFilterResult;
import dev.hamilock.extender.v1.ExtenderJson;
import dev.hamilock.testkit.ApiServerEmulator;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23 fault 3: {@code /filter} trusted the pod in the request body. A body saying {@code
 * hami-scheduler} for a stored pod of {@code default-scheduler} made the extender write HAMi's
 * allocation annotations onto the stored pod (HTTP 200). Now the stored pod decides: the forged
 * body is refused with the extender's refusal (HTTP 400, a filter result with only {@code Error})
 * and no pod is patched; so is a body whose UID is not the stored pod's. The running extender
 * ({@link ExtenderMain#run}) over the testkit's API emulator.
 */
class Issue23ForgedFilterBodyTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;
  private ApiServerEmulator k8s;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void start() throws Exception {
    k8s = ApiServerEmulator.start();
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    // a GPU pod of the default scheduler: not this extender's
    ObjectNode other = (ObjectNode) k8s.get("pods", "default", "gang-worker-3").orElseThrow();
    ObjectNode meta = (ObjectNode) other.get("metadata");
    meta.put("name", "not-ours");
    meta.remove(List.of("uid", "resourceVersion", "creationTimestamp"));
    ((ObjectNode) other.get("spec")).put("schedulerName", "default-scheduler");
    k8s.create(JSON.convertValue(other, java.util.Map.class));
  }

  @AfterEach
  void stop() {
    k8s.close();
  }

  @Test
  void aForgedSchedulerNameOrUidInTheFilterBodyWritesNothingAndIsRefused() throws Exception {
    Path kubeconfig = tmp.resolve("kubeconfig");
    Files.writeString(kubeconfig, k8s.kubeconfig());
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        ExtenderMain.run(
            List.of("--kubeconfig", kubeconfig.toString(), "--port=0", "--bind-address=127.0.0.1"),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            ext -> {
              String base = "http://127.0.0.1:" + ext.port();
              awaitReady(base);
              long podPatches = k8s.requestCount("patch", "pods");

              ObjectNode forged = (ObjectNode) pod("not-ours");
              ((ObjectNode) forged.get("spec")).put("schedulerName", "hami-scheduler");
              HttpResponse<String> r = post(base, filterArgs(forged));
              assertRefusal(r)
                  .contains("pod default/not-ours has schedulerName default-scheduler")
                  .contains("does not serve (serves: hami-scheduler)")
                  .contains("nothing was changed");

              ObjectNode otherUid = (ObjectNode) pod("gang-worker-1");
              ((ObjectNode) otherUid.get("metadata")).put("uid", "forged-uid");
              assertRefusal(post(base, filterArgs(otherUid)))
                  .contains("pod default/gang-worker-1 is stored with uid ")
                  .contains("not the request's forged-uid")
                  .contains("nothing was changed");

              assertThat(k8s.requestCount("patch", "pods")).as("pod patches").isEqualTo(podPatches);
              for (String name : List.of("not-ours", "gang-worker-1")) {
                assertThat(pod(name).at("/metadata/annotations").has("hami.io/vgpu-node"))
                    .as(name + " carries no HAMi allocation")
                    .isFalse();
              }

              // the same path writes for the honest body of a served pod
              HttpResponse<String> ok = post(base, filterArgs((ObjectNode) pod("gang-worker-1")));
              assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
              assertThat(ok.body()).isEqualTo(fixture("F-82-filter-result-success.json"));
              assertThat(
                      pod("gang-worker-1").at("/metadata/annotations/hami.io~1vgpu-node").asText())
                  .isEqualTo("node-a");
            });
    assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isEqualTo(ExtenderMain.EXIT_OK);
  }

  /** The extender's refusal on the wire: HTTP 400 and a filter result carrying only Error. */
  private static org.assertj.core.api.AbstractStringAssert<?> assertRefusal(HttpResponse<String> r)
      throws Exception {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
    String error = JSON.readTree(r.body()).path("Error").asText();
    assertThat(r.body()).isEqualTo(ExtenderJson.encode(ExtenderFilterResult.ofError(error)));
    return assertThat(error);
  }

  private JsonNode pod(String name) {
    return k8s.get("pods", "default", name).orElseThrow();
  }

  private static String filterArgs(ObjectNode pod) throws Exception {
    ObjectNode args = (ObjectNode) JSON.readTree(fixture("F-81-filter-args-null-pod.json"));
    args.set("Pod", pod);
    args.putArray("NodeNames").add("node-a").add("node-b");
    return JSON.writeValueAsString(args);
  }

  private HttpResponse<String> post(String base, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(base + "/filter"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private void awaitReady(String base) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (http.send(
                HttpRequest.newBuilder(URI.create(base + "/readyz"))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.discarding())
            .statusCode()
        != 200) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the extender did not become ready");
      }
      Thread.sleep(5);
    }
  }
}
