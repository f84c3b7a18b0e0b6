package dev.hamilock.examples.extender;

import static dev.hamilock.examples.extender.ExtenderFixtures.fixture;
import static dev.hamilock.examples.extender.ExtenderFixtures.seed;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testing.logs.LogCapture;
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
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Filter reads DRA objects from the extender's informers (issue 28 item 1 "the reads are
 * watched", issue 25 item 2): on an API server that serves {@code resource.k8s.io/v1}, a filter
 * request sends no DRA LIST, and a claim allocated or deallocated after the start reaches the
 * Filter through the watch. The emulator adds a field no client-java model knows to every object it
 * serves: the informers hold client-java's dynamic objects, which tolerate it (its generated
 * models' strict validation would keep an informer from ever syncing, kube-api-notes §4.2).
 */
class WatchedDraTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** node-a's two A40s (fixtures/nodes.yaml). */
  private static final String CARD_0 = "GPU-03f69c50-207a-2038-9b45-23cac89cb67d";

  private static final String CARD_1 = "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae";

  @TempDir Path tmp;
  private ApiServerEmulator k8s;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private LogCapture log; // client-java's informer-stop ERROR, see InformerStopLog

  @BeforeEach
  void start() {
    log = LogCapture.start();
    k8s = ApiServerEmulator.builder().servingDra(true).start();
  }

  @AfterEach
  void stop() throws InterruptedException {
    k8s.close();
    // the relist test's injected watch failures, reported once per resource
    log.expect("WARN .*InformerFailureLog - cannot list and watch resourceclaims .*");
    // and its compaction, which the node lock watch meets as a 410 ERROR event and relists
    log.expect("DEBUG .*ListAndWatch - node lock watch: ERROR event .*");
    InformerStopLog.closeAfterInformersStopped(log);
  }

  @Test
  void aFilterSendsNoDraListAndSeesClaimsThroughTheWatch() throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    sliceOfNodeA();
    runExtender(
        (ext, filter) -> {
          assertThat(filter(filter)).as("both cards free").contains("node-a");

          allocated("c0", "gpu-0");
          allocated("c1", "gpu-1");
          String taken = untilAnswer(filter, a -> a.contains("\"NodeNames\":[\"node-b\"]"));
          assertThat(taken)
              .as("node-a's two cards are held whole by claims")
              .contains("\"node-a\":\"2/2 CardInsufficientMemory\"");

          k8s.resetCounters();
          filter(filter);
          assertThat(k8s.requestCount("list", "resourceslices")).as("slice LISTs").isZero();
          assertThat(k8s.requestCount("list", "resourceclaims")).as("claim LISTs").isZero();
          assertThat(k8s.requestCount("get", "/apis/resource.k8s.io/v1"))
              .as("DRA discovery")
              .isZero();

          // kube-scheduler deallocates c1 (its pod finished): node-a is offered again
          k8s.mutate(
              "resourceclaims",
              "default",
              "c1",
              c -> {
                c.remove("status");
                return c;
              });
          untilAnswer(filter, a -> a.contains("\"NodeNames\":[\"node-a\"]"));
        });
  }

  /**
   * A claim deleted while the claims' watch is down reaches the Filter through the relist (the
   * reflector's replace: a DeletedFinalStateUnknown delete), and the DRA informers' threads end
   * with the extender.
   */
  @Test
  void aClaimDeletedWhileTheWatchIsDownLeavesTheCacheThroughTheRelist() throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    sliceOfNodeA();
    allocated("c0", "gpu-0");
    allocated("c1", "gpu-1");
    runExtender(
        (ext, filter) -> {
          assertThat(filter(filter)).contains("\"NodeNames\":[\"node-b\"]");
          // the claims' next watch fails: the reflector relists, after c1 is gone
          k8s.addFault(
              dev.hamilock.testkit.FaultRule.matching()
                  .verb("watch")
                  .resource("resourceclaims")
                  .times(3)
                  .respondStatus(500, "InternalError", "injected"));
          k8s.dropWatches();
          k8s.delete("resourceclaims", "default", "c1");
          k8s.compact();
          untilAnswer(filter, a -> a.contains("\"NodeNames\":[\"node-a\"]"));
          assertThat(ext.draWatched()).isTrue();
        });
    InformerStopLog.awaitInformersStopped();
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (draThreads() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(draThreads()).as("DRA informer threads alive after the stop").isZero();
  }

  private static long draThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .filter(t -> t.getName().contains("DynamicKubernetesObject"))
        .count();
  }

  /**
   * The Filter's failed-node text names a node's unresolved claims in the order the fresh reader's
   * LIST gives them (namespace, name), not in the informer's hash order: the cached and the fresh
   * path answer the same bytes.
   */
  @Test
  void unresolvedClaimsAreNamedInTheListsOrder() throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    // devices of node-a's pool that no ResourceSlice publishes: the node's usage is unknown
    for (String[] c : new String[][] {{"alpha", "gpu-7"}, {"beta", "gpu-8"}, {"gamma", "gpu-9"}}) {
      allocated(c[0], c[1]);
    }
    runExtender(
        (ext, filter) -> {
          String answer = filter(filter);
          int alpha = answer.indexOf("default/alpha");
          int beta = answer.indexOf("default/beta");
          int gamma = answer.indexOf("default/gamma");
          assertThat(alpha).as(answer).isPositive();
          assertThat(List.of(alpha, beta, gamma)).as(answer).isSorted();
        });
  }

  /**
   * A malformed DRA object fails the Filter with the fresh reader's words ({@code reading
   * /apis/resource.k8s.io/v1: ...}), watched or listed.
   */
  @Test
  void aMalformedClaimFailsTheFilterInTheFreshReadersWords() throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    k8s.create(
        JSON.readTree(
            ("{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':'bad',"
                    + "'namespace':'default'},'spec':{},'status':{'allocation':{'devices':"
                    + "{'results':'not a list'}}}}")
                .replace('\'', '"')));
    runExtender(
        (ext, filter) -> {
          assertThat(filter(filter))
              .contains(
                  "filter of pod default/gang-worker-1 failed: reading /apis/resource.k8s.io/v1: ");
        });
  }

  /** What a test does with the running extender, given its /filter URL. */
  private interface WithExtender {
    void run(RunningExtender ext, String filterUrl) throws Exception;
  }

  /**
   * Runs the extender over the emulator until {@code test} returns, once it is ready and its DRA
   * informers have synced; the extender exits 0.
   */
  private void runExtender(WithExtender test) throws Exception {
    Path kubeconfig = tmp.resolve("kubeconfig");
    Files.writeString(kubeconfig, k8s.kubeconfig());
    ByteArrayOutputStream logs = new ByteArrayOutputStream();
    int code =
        ExtenderMain.run(
            List.of("--kubeconfig", kubeconfig.toString(), "--port=0"),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(logs, true, StandardCharsets.UTF_8),
            ext -> {
              until(ext, e -> e.ready() && e.draWatched());
              test.run(ext, "http://127.0.0.1:" + ext.port() + "/filter");
            });
    assertThat(code).as("%s", logs).isZero();
  }

  /** NVIDIA's DRA driver's slice of node-a: gpu-0 and gpu-1 are its two cards. */
  private void sliceOfNodeA() throws Exception {
    k8s.create(
        JSON.readTree(
            ("{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice',"
                    + "'metadata':{'name':'node-a-gpu'},'spec':{'driver':'gpu.nvidia.com',"
                    + "'nodeName':'node-a','pool':{'name':'node-a','generation':1,"
                    + "'resourceSliceCount':1},'devices':[{'name':'gpu-0','attributes':{'uuid':"
                    + "{'string':'"
                    + CARD_0
                    + "'}}},{'name':'gpu-1','attributes':{'uuid':{'string':'"
                    + CARD_1
                    + "'}}}]}}")
                .replace('\'', '"')));
  }

  /** A claim for one GPU allocated to {@code device} of node-a's slice. */
  private void allocated(String name, String device) throws Exception {
    k8s.create(
        JSON.readTree(
            ("{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim','metadata':{'name':'"
                    + name
                    + "','namespace':'default'},'spec':{'devices':{'requests':[{'name':'gpu',"
                    + "'exactly':{'deviceClassName':'gpu.nvidia.com','allocationMode':'ExactCount',"
                    + "'count':1}}]}},'status':{'allocation':{'devices':{'results':[{'request':"
                    + "'gpu','driver':'gpu.nvidia.com','pool':'node-a','device':'"
                    + device
                    + "'}]}}}}")
                .replace('\'', '"')));
  }

  private String filter(String url) throws Exception {
    ObjectNode args = (ObjectNode) JSON.readTree(fixture("F-81-filter-args-null-pod.json"));
    args.set("Pod", k8s.get("pods", "default", "gang-worker-1").orElseThrow());
    args.set("NodeNames", JSON.valueToTree(List.of("node-a", "node-b")));
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(args)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return r.body();
  }

  private String untilAnswer(String url, Predicate<String> wanted) throws Exception {
    long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    String answer = filter(url);
    while (!wanted.test(answer) && System.nanoTime() < until) {
      Thread.sleep(20);
      answer = filter(url);
    }
    assertThat(answer).matches(wanted::test, "the expected filter answer within 20 s");
    return answer;
  }

  private static void until(RunningExtender ext, Predicate<RunningExtender> state)
      throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!state.test(ext) && System.nanoTime() < until) {
      Thread.sleep(20);
    }
    assertThat(state.test(ext)).as("ready and DRA watched within 20 s").isTrue();
  }
}
