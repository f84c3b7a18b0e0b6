package dev.hamilock.examples.extender;

import static dev.hamilock.examples.extender.ExtenderFixtures.fixture;
import static dev.hamilock.examples.extender.ExtenderFixtures.seed;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.NodeLock;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testing.logs.LogCapture;
import dev.hamilock.testkit.ApiServerEmulator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example as kube-scheduler meets it: {@link ExtenderMain#run} with HAMi's flags and {@code
 * --kubeconfig} pointing at the testkit's API emulator, seeded with the guide's gang and two nodes
 * with real HAMi registrations (fixtures/README.md), and the recorded kube-scheduler payloads
 * (F-81, F-82; PascalCase keys, F-80) POSTed over HTTP.
 */
class ExtenderMainTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String NODE = "node-a";
  private static final String MUTEX = NodeLock.DEFAULT_KEY;

  @TempDir Path tmp;
  private ApiServerEmulator k8s;
  private LogCapture log; // client-java's informer-stop ERROR, see InformerStopLog
  private Path kubeconfig;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeEach
  void start() throws IOException {
    log = LogCapture.start();
    k8s = ApiServerEmulator.start();
    kubeconfig = tmp.resolve("kubeconfig");
    Files.writeString(kubeconfig, k8s.kubeconfig());
  }

  @AfterEach
  void stop() throws InterruptedException {
    k8s.close();
    InformerStopLog.closeAfterInformersStopped(log);
  }

  private int run(ExtenderMain.Serving serving, String... args) {
    return ExtenderMain.run(
        List.of(args),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        serving);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void servesTheGuidesGangOverHttpAndHoldsTheNodeLockUntilTheDevicePluginHandsOff()
      throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    int code =
        run(
            ext -> {
              String base = "http://127.0.0.1:" + ext.port();
              awaitReady(base);
              assertThat(get(base + "/healthz").body()).isEqualTo("ok");

              // HAMi's own filter bodies without a pod get HAMi's error, byte for byte
              for (String f :
                  List.of("F-81-filter-args-no-pod.json", "F-81-filter-args-null-pod.json")) {
                assertThat(post(base + "/filter", fixture(f)).body())
                    .as(f)
                    .isEqualTo(fixture("F-82-filter-result-error.json"));
              }

              // gang-worker-1: Filter (nodeCacheCapable: NodeNames) then Bind
              assertThat(post(base + "/filter", filterArgs("gang-worker-1")).body())
                  .isEqualTo(
                      fixture("F-82-filter-result-success.json")); // NodeNames ["node-a"]: binpack
              assertThat(post(base + "/bind", bindingArgs("gang-worker-1")).body())
                  .isEqualTo(fixture("F-82-binding-result-ok.json"));
              JsonNode w1 = pod("gang-worker-1");
              assertThat(w1.at("/spec/nodeName").asText()).isEqualTo(NODE);
              assertHamiAllocation(w1, "allocating");
              String lock1 = lockValue();
              assertThat(lock1)
                  .as("node lock held for the device plugin")
                  .matches("\\d{4}-\\d\\d-\\d\\dT.*,default,gang-worker-1");

              // gang-worker-2 passes the Filter, then its bind waits for the node lock (gang
              // member)
              assertThat(post(base + "/filter", filterArgs("gang-worker-2")).body())
                  .isEqualTo(fixture("F-82-filter-result-success.json"));
              long nodePatches = k8s.requestCount("patch", "nodes");
              CompletableFuture<HttpResponse<String>> bind2 =
                  http.sendAsync(
                      request(base + "/bind", bindingArgs("gang-worker-2")),
                      HttpResponse.BodyHandlers.ofString());
              awaitContended(nodePatches, bind2);
              assertThat(pod("gang-worker-2").at("/spec/nodeName").asText()).isEmpty();
              assertThat(lockValue())
                  .as("the first member's lock is kept while the second waits")
                  .isEqualTo(lock1);

              // a simulated HAMi device plugin on node-a (its own client) serves Allocate:
              // hand-off, release
              try (KubernetesHamiStack plugin =
                  KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                      .watch(false)
                      .build()) {
                HandoffResult h1 = plugin.devicePluginHandoff("NVIDIA").allocateAll(NODE);
                assertThat(h1.status()).isEqualTo(HandoffResult.Status.COMPLETED);
                assertThat(h1.lockReleased()).isTrue();
                assertHamiAllocation(pod("gang-worker-1"), "success");

                // the release wakes the waiting member: bound, holding the lock in turn
                assertThat(bind2.get(20, TimeUnit.SECONDS).body())
                    .isEqualTo(fixture("F-82-binding-result-ok.json"));
                JsonNode w2 = pod("gang-worker-2");
                assertThat(w2.at("/spec/nodeName").asText()).isEqualTo(NODE);
                assertHamiAllocation(w2, "allocating");
                assertThat(lockValue()).endsWith(",default,gang-worker-2");
                // both binds' lock waits reached /metrics: the extender serves the stack's one
                // binder, whose
                // acquire loop reports to the stack's listener (the Micrometer listener among them)
                assertThat(
                        ext.meters().find("hami.lock.wait").tag("acquired", "true").timer().count())
                    .isEqualTo(2);

                HandoffResult h2 = plugin.devicePluginHandoff("NVIDIA").allocateAll(NODE);
                assertThat(h2.lockReleased()).isTrue();
                assertThat(lockValue()).as("no lock left").isNull();
              }
              // two members on two different A40s of node-a (spread), no over-commit
              assertThat(allocated("gang-worker-1")).isNotEqualTo(allocated("gang-worker-2"));
            },
            "--kubeconfig",
            kubeconfig.toString(),
            "--port=0",
            "--bind-address=127.0.0.1");
    assertThat(code).as(err()).isEqualTo(ExtenderMain.EXIT_OK);
    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("serving http://127.0.0.1:")
        .contains("node-lock-retry-timeout 28s")
        .contains("node-lock-timeout 5m0s")
        .contains("extender-http-timeout 30s")
        .contains(k8s.url());
  }

  @Test
  void refusesToStartWhenTheRetryTimeoutIsNotBelowTheExtenderHttpTimeout() {
    AtomicBoolean served = new AtomicBoolean();
    assertThat(
            run(
                ext -> served.set(true),
                "--kubeconfig",
                kubeconfig.toString(),
                "--node-lock-retry-timeout=30s"))
        .isEqualTo(ExtenderMain.EXIT_USER_ERROR);
    assertThat(err())
        .contains("refusing to start")
        .contains("--node-lock-retry-timeout=30s")
        .contains("--extender-http-timeout=30s");
    err.reset();
    assertThat(
            run(
                ext -> served.set(true),
                "--kubeconfig",
                kubeconfig.toString(),
                "--extender-http-timeout",
                "5s"))
        .isEqualTo(ExtenderMain.EXIT_USER_ERROR);
    assertThat(err())
        .contains("refusing to start")
        .contains("--node-lock-retry-timeout=28s")
        .contains("--extender-http-timeout=5s");
    assertThat(served).as("nothing served").isFalse();
    assertThat(k8s.totalRequests()).as("the cluster was never contacted").isZero();
  }

  @Test
  void aRetryTimeoutBelowTheHttpTimeoutStartsAndTheFlagsReachTheLockStack() {
    AtomicBoolean served = new AtomicBoolean();
    int code =
        run(
            ext -> {
              served.set(true);
              assertThat(ext.hami().settings().lock().lockTimeout())
                  .isEqualTo(Duration.ofMinutes(2));
              assertThat(ext.hami().settings().lock().retryPolicy().retryTimeout())
                  .isEqualTo(Duration.ofSeconds(4));
              assertThat(ext.hami().settings().requestTimeout())
                  .as("half the 5s HTTP timeout")
                  .isEqualTo(Duration.ofMillis(2500));
            },
            "--kubeconfig=" + kubeconfig,
            "--port=0",
            "--bind-address=127.0.0.1",
            "--node-lock-retry-timeout=4s",
            "--extender-http-timeout=5s",
            "--node-lock-timeout=2m");
    assertThat(code).as(err()).isEqualTo(ExtenderMain.EXIT_OK);
    assertThat(served).isTrue();
  }

  @Test
  void badFlagsAndAnUnusableKubeconfigAreUserErrorsNamingTheValue() {
    ExtenderMain.Serving never =
        ext -> {
          throw new AssertionError("must not serve");
        };
    assertThat(run(never, "--bogus")).isEqualTo(ExtenderMain.EXIT_USER_ERROR);
    assertThat(err())
        .contains("unknown flag: --bogus")
        .contains("--node-lock-retry-timeout") // the library's flags, then this program's
        .contains(", --kubeconfig, --gpu-preemption, --help)");
    err.reset();
    assertThat(run(never, "--node-lock-timeout", "5 minutes"))
        .isEqualTo(ExtenderMain.EXIT_USER_ERROR);
    assertThat(err()).contains("5 minutes").contains("--node-lock-timeout");
    err.reset();
    assertThat(run(never, "--kubeconfig")).isEqualTo(ExtenderMain.EXIT_USER_ERROR);
    assertThat(err()).contains("--kubeconfig");
    err.reset();
    Path missing = tmp.resolve("no-such-kubeconfig");
    assertThat(run(never, "--kubeconfig", missing.toString()))
        .isEqualTo(ExtenderMain.EXIT_USER_ERROR);
    assertThat(err()).contains("no such file " + missing);
  }

  @Test
  void helpPrintsTheFlagsWithHamisDefaults() {
    assertThat(
            run(
                ext -> {
                  throw new AssertionError("must not serve");
                },
                "--help"))
        .isEqualTo(ExtenderMain.EXIT_OK);
    assertThat(out.toString(StandardCharsets.UTF_8))
        .isEqualTo(ExtenderOptions.USAGE)
        .contains("--node-lock-retry-timeout DUR")
        .contains("(default 28s; 0 disables waiting)")
        .contains("--node-lock-timeout DUR")
        .contains("else 5m")
        .contains("--extender-http-timeout DUR")
        .contains("--kubeconfig PATH");
  }

  @Test
  void optionsDefaultToHamisFlagsAndTakeKubeconfigInBothForms() {
    ExtenderOptions d = ExtenderOptions.parse(List.of());
    assertThat(d.config().schedulerFlags().nodeLockRetryTimeout())
        .isEqualTo(Duration.ofSeconds(28));
    assertThat(d.config().schedulerFlags().nodeLockTimeout()).isEqualTo(Duration.ofMinutes(5));
    assertThat(d.config().schedulerFlags().extenderHttpTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(d.kubeconfig()).isEmpty();
    assertThat(d.help()).isFalse();
    assertThat(d.gpuPreemption()).as("GPU preemption is opt-in").isFalse();
    assertThat(ExtenderOptions.parse(List.of("--gpu-preemption", "--port=1")).gpuPreemption())
        .isTrue();
    assertThat(ExtenderOptions.parse(List.of("--kubeconfig", "/k")).kubeconfig())
        .contains(Path.of("/k"));
    ExtenderOptions eq =
        ExtenderOptions.parse(
            List.of("--port=9443", "--kubeconfig=/k2", "--node-lock-retry-timeout=0"));
    assertThat(eq.kubeconfig()).contains(Path.of("/k2"));
    assertThat(eq.config().port()).isEqualTo(9443);
    assertThat(eq.config().schedulerFlags().retryPolicy().retriesEnabled())
        .as("0 disables waiting")
        .isFalse();
  }

  @Test
  void preemptAddsTheGpuVictimFromTheWatchedPodCache() throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    int code =
        run(
            ext -> {
              String base = "http://127.0.0.1:" + ext.port();
              awaitReady(base);
              post(base + "/filter", filterArgs("gang-worker-1"));
              post(base + "/bind", bindingArgs("gang-worker-1"));
              String victim = pod("gang-worker-1").at("/metadata/uid").asText();
              // both A40s of node-a almost whole: only gang-worker-1 (priority 0) is in the way
              ObjectNode urgent = (ObjectNode) pod("gang-worker-3").deepCopy();
              ObjectNode meta = (ObjectNode) urgent.get("metadata");
              meta.put("name", "urgent").remove(List.of("uid", "resourceVersion", "labels"));
              ((ObjectNode) urgent.get("spec")).put("priority", 1000);
              ((ObjectNode) urgent.at("/spec/containers/0/resources/limits"))
                  .put("nvidia.com/gpu", "2")
                  .put("nvidia.com/gpumem", "46000");
              urgent = (ObjectNode) k8s.create(JSON.convertValue(urgent, Map.class));
              ObjectNode args = JSON.createObjectNode();
              args.set("Pod", urgent);
              args.putNull("NodeNameToVictims");
              args.putObject("NodeNameToMetaVictims")
                  .putObject(NODE)
                  .put("NumPDBViolations", 0)
                  .putArray("Pods")
                  .addObject()
                  .put("UID", "uid-seen-by-kube");
              String want =
                  "{\"NodeNameToMetaVictims\":{\"node-a\":{\"Pods\":[{\"UID\":\"uid-seen-by-kube\"},"
                      + "{\"UID\":\""
                      + victim
                      + "\"}],\"NumPDBViolations\":0}}}";
              long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
              String got = post(base + "/preempt", JSON.writeValueAsString(args)).body();
              while (!got.equals(want) && System.nanoTime() < deadline) { // the cache's watch lag
                Thread.sleep(10);
                got = post(base + "/preempt", JSON.writeValueAsString(args)).body();
              }
              assertThat(got).isEqualTo(want);
            },
            "--kubeconfig",
            kubeconfig.toString(),
            "--port=0",
            "--bind-address=127.0.0.1");
    assertThat(code).as(err()).isEqualTo(ExtenderMain.EXIT_OK);
  }

  @Test
  void closeStopsTheGpuPreemptionWorkerThread() throws Exception {
    seed(k8s, "gang-training.yaml");
    seed(k8s, "nodes.yaml");
    List<Thread> workers = new java.util.ArrayList<>();
    int code =
        run(
            ext -> {
              String base = "http://127.0.0.1:" + ext.port();
              awaitReady(base);
              ObjectNode urgent = (ObjectNode) pod("gang-worker-3").deepCopy();
              ObjectNode meta = (ObjectNode) urgent.get("metadata");
              meta.put("name", "urgent").remove(List.of("uid", "resourceVersion", "labels"));
              ((ObjectNode) urgent.get("spec")).put("priority", 1000);
              ((ObjectNode) urgent.at("/spec/containers/0/resources/limits"))
                  .put("nvidia.com/gpumem", "99000"); // more than any card: fits nowhere
              k8s.create(JSON.convertValue(urgent, Map.class));
              long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
              while (workers.isEmpty() && System.nanoTime() < deadline) { // the cache's watch lag
                post(base + "/filter", filterArgs("urgent"));
                Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("hami-gpu-preemption"))
                    .forEach(workers::add);
                Thread.sleep(10);
              }
              assertThat(workers).as("a failed /filter started the worker").isNotEmpty();
            },
            "--kubeconfig=" + kubeconfig,
            "--port=0",
            "--bind-address=127.0.0.1",
            "--gpu-preemption");
    assertThat(code).as(err()).isEqualTo(ExtenderMain.EXIT_OK);
    assertThat(workers).noneMatch(Thread::isAlive);
  }

  // ------------------------------------------------------------------ helpers

  /**
   * F-81's recorded body with the stored pod and both nodes, as kube-scheduler sends it
   * (nodeCacheCapable).
   */
  private String filterArgs(String pod) throws IOException {
    ObjectNode args = (ObjectNode) JSON.readTree(fixture("F-81-filter-args-null-pod.json"));
    args.set("Pod", pod(pod));
    args.putArray("NodeNames").add("node-a").add("node-b");
    return JSON.writeValueAsString(args);
  }

  /** F-82's recorded bind request with the member's identity. */
  private String bindingArgs(String pod) throws IOException {
    ObjectNode args = (ObjectNode) JSON.readTree(fixture("F-82-binding-args.json"));
    JsonNode stored = pod(pod);
    args.put("PodName", pod)
        .put("PodNamespace", "default")
        .put("PodUID", stored.at("/metadata/uid").asText())
        .put("Node", NODE);
    return JSON.writeValueAsString(args);
  }

  private JsonNode pod(String name) {
    return k8s.get("pods", "default", name).orElseThrow();
  }

  private String lockValue() {
    JsonNode v = k8s.get("nodes", null, NODE).orElseThrow().at("/metadata/annotations").get(MUTEX);
    return v == null ? null : v.asText();
  }

  private String allocated(String pod) {
    return pod(pod).at("/metadata/annotations").path("hami.io/vgpu-devices-allocated").asText();
  }

  private static void assertHamiAllocation(JsonNode pod, String bindPhase) {
    JsonNode a = pod.at("/metadata/annotations");
    assertThat(a.path("hami.io/vgpu-node").asText()).isEqualTo(NODE);
    assertThat(a.path("hami.io/bind-phase").asText()).isEqualTo(bindPhase);
    assertThat(a.path("hami.io/vgpu-devices-allocated").asText())
        .matches("GPU-[0-9a-f-]+,NVIDIA,3000,30:;");
    // the device plugin's hand-off consumes the to-allocate list (HAMi
    // EraseNextDeviceTypeFromAnnotation)
    assertThat(a.path("hami.io/vgpu-devices-to-allocate").asText())
        .matches(bindPhase.equals("success") ? ";" : "GPU-[0-9a-f-]+,NVIDIA,3000,30:;");
    assertThat(a.path("hami.io/bind-time").asText()).matches("\\d+");
    assertThat(a.path("hami.io/vgpu-time").asText()).matches("\\d+");
  }

  private HttpRequest request(String url, String body) {
    return HttpRequest.newBuilder(URI.create(url))
        .timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }

  private HttpResponse<String> post(String url, String body)
      throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(request(url, body), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(url + " " + r.body()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).contains("application/json");
    return r;
  }

  private HttpResponse<String> get(String url) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Waits (bounded) until {@code /readyz} answers 200: the node watch has synced. */
  private void awaitReady(String base) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (get(base + "/readyz").statusCode() != 200) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the extender did not become ready");
      }
      Thread.sleep(5);
    }
  }

  /** Waits (bounded) until the pending bind waits in the node's fair queue. */
  /**
   * Waits until the pending bind tried the held node lock (a node PATCH after {@code nodePatches})
   * and still waits.
   */
  private void awaitContended(long nodePatches, CompletableFuture<?> pending) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (k8s.requestCount("patch", "nodes") <= nodePatches) {
      if (pending.isDone()) {
        throw new AssertionError("the bind ended instead of waiting: " + pending.get());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the bind did not queue for the node lock");
      }
      Thread.sleep(2);
    }
  }
}
