package dev.hamilock.examples.extender;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.GoDuration;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.extender.ExtenderConfig;
import dev.hamilock.k8s.KubernetesLockOwners;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.RealApiServer;
import dev.hamilock.testkit.RequestKey;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The guide's set-up end to end on a real control plane: kube-scheduler v1.37.2 (in the {@code
 * realcluster} launcher, {@code --with-scheduler}) with a KubeSchedulerConfiguration that registers
 * this example's extender as HAMi's chart registers HAMi's (filter + bind, nodeCacheCapable, weight
 * 1, httpTimeout 30s, plain HTTP, HAMi's resources managed and ignored by the scheduler, scheduler
 * name {@code hami-scheduler}), the guide's gang (minMember 4, 4 × 1 GPU / 3000 MiB / 30 %)
 * released together by kube-scheduler 1.37's own gang scheduling (feature gate {@code
 * GenericWorkload}, {@code scheduling.k8s.io/v1beta1} PodGroup with {@code
 * schedulingPolicy.gang.minCount: 4}, members naming it in {@code
 * spec.schedulingGroup.podGroupName} and carrying the scheduler-plugins label too), on the two GPU
 * nodes of fixtures/nodes.yaml (F-03 and F-17 registrations) created through the API with status
 * capacity/allocatable, each served by a simulated HAMi device plugin ({@code DevicePluginHandoff},
 * 20 ms Allocate, then the pod is marked Running through the status subresource).
 *
 * <p>Run twice on one control plane: the extender with HAMi's gang retry ({@code
 * --node-lock-retry-timeout=28s}) and fail-fast ({@code 0}). Each run asserts every member bound by
 * the scheduler through the extender and Running, no device slice over-committed, no node lock
 * left; and prints time to fully bound, the extender HTTP calls kube-scheduler made (counted by a
 * forwarding proxy the scheduler configuration points at) and the node requests per member from the
 * API server's {@code apiserver_request_total}.
 *
 * <p>Needs {@code testing/realcluster/build}; runs with {@code mvn -B verify -Preal-apiserver}.
 */
@Tag("real-apiserver")
class RealSchedulerGangTest {
  static final String SCHEDULER = "hami-scheduler";
  static final String NS = "default";
  static final String REGISTER = "hami.io/node-nvidia-register";
  static final String LOCK = "hami.io/mutex.lock";

  @TempDir static Path tmp;
  static RealApiServer k8s;
  static CountingProxy proxy;
  static final Map<String, String> RESULTS = new LinkedHashMap<>();

  @BeforeAll
  static void start() throws Exception {
    proxy = CountingProxy.start();
    Path config = tmp.resolve("scheduler-config.yaml");
    Files.writeString(
        config, schedulerConfiguration(SCHEDULER, "http://127.0.0.1:" + proxy.port()));
    k8s =
        RealApiServer.builder()
            .featureGates("GenericWorkload=true")
            .runtimeConfig("scheduling.k8s.io/v1beta1=true")
            .withScheduler(config)
            .clientReadTimeout(Duration.ofSeconds(30))
            .start();
    createNode(
        "node-a",
        "GPU-03f69c50-207a-2038-9b45-23cac89cb67d,10,46068,100,NVIDIA-NVIDIA A40,0,true:"
            + "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae,10,46068,100,NVIDIA-NVIDIA A40,0,true:",
        20);
    createNode(
        "node-b",
        "[{\"id\":\"GPU-3c4a3856-fbb4-1425-9679-aed25f4d2977\",\"count\":10,\"devmem\":97887,"
            + "\"devcore\":100,\"type\":\"NVIDIA RTX PRO 6000 Blackwell Server Edition\",\"mode\":\"hami-core\","
            + "\"health\":true,\"devicepairscore\":{}}]",
        10);
  }

  @AfterAll
  static void stop() {
    RESULTS.forEach((k, v) -> System.out.println("real-scheduler " + k + ": " + v));
    if (k8s != null) {
      k8s.close();
    }
    if (proxy != null) {
      proxy.close();
    }
  }

  /**
   * HAMi's chart's extender registration (charts/hami/templates/scheduler/configmap.yaml), plain
   * HTTP, for the profile {@code schedulerName}.
   */
  static String schedulerConfiguration(String schedulerName, String urlPrefix) {
    return """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        leaderElection:
          leaderElect: false
        profiles:
          - schedulerName: %s
        extenders:
          - urlPrefix: "%s"
            filterVerb: filter
            bindVerb: bind
            enableHTTPS: false
            nodeCacheCapable: true
            weight: 1
            httpTimeout: 30s
            managedResources:
              - name: nvidia.com/gpu
                ignoredByScheduler: true
              - name: nvidia.com/gpumem
                ignoredByScheduler: true
              - name: nvidia.com/gpucores
                ignoredByScheduler: true
              - name: nvidia.com/gpumem-percentage
                ignoredByScheduler: true
        """
        .formatted(schedulerName, urlPrefix);
  }

  static void createNode(String name, String registration, int gpus) {
    createNode(k8s, name, registration, gpus);
  }

  /** A Ready GPU node with HAMi's registration and {@code gpus} as its nvidia.com/gpu. */
  static void createNode(RealApiServer k8s, String name, String registration, int gpus) {
    Map<String, String> resources =
        Map.of(
            "cpu",
            "32",
            "memory",
            "128Gi",
            "pods",
            "110",
            "nvidia.com/gpu",
            Integer.toString(gpus));
    k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Node",
            "metadata",
            Map.of(
                "name",
                name,
                "annotations",
                Map.of(
                    REGISTER,
                    registration,
                    "hami.io/node-handshake",
                    "Reported 2026-12-01 00:00:00.000000000 +0000 UTC")),
            "status",
            Map.of(
                "capacity",
                resources,
                "allocatable",
                resources,
                "conditions",
                List.of(Map.of("type", "Ready", "status", "True", "reason", "KubeletReady")))));
    // the TaintNodesByCondition admission plugin adds node.kubernetes.io/not-ready:NoSchedule on
    // create; with no kubelet or node controller, remove it as the node controller would
    k8s.mutate(
        "nodes",
        null,
        name,
        o -> {
          o.withObjectProperty("spec").remove("taints");
          return o;
        });
  }

  @Test
  void guidesGangIsBoundByTheRealSchedulerThroughTheExtenderWithRetryAndFailFast()
      throws Exception {
    run(
        "warmup",
        Duration.ofSeconds(28)); // the scheduler's and extender's first cycles, not reported
    List<Long> retry = new ArrayList<>();
    List<Long> failFast = new ArrayList<>();
    for (int round = 1; round <= 2; round++) { // alternated, so drift in machine load hits both
      retry.add(run("retry" + round, Duration.ofSeconds(28)).toMillis());
      failFast.add(run("failfast" + round, Duration.ZERO).toMillis());
    }
    RESULTS.put(
        "gang of 4 on 2 nodes, ms to all Running",
        "retry 28s " + retry + ", fail-fast " + failFast);
  }

  /**
   * @return the time from creating the members to the last one Running
   */
  Duration run(String tag, Duration retryTimeout) throws Exception {
    ExtenderConfig config =
        ExtenderConfig.builder()
            .bindAddress("127.0.0.1")
            .port(0)
            .schedulerFlags(
                HamiSchedulerFlags.parse(
                    "--node-lock-retry-timeout=" + GoDuration.format(retryTimeout),
                    "--extender-http-timeout=30s"))
            .build();
    String group = "gang-" + tag;
    // the extender's watched cache needs a client without a read timeout for its informers
    try (RunningExtender ext =
            RunningExtender.start(
                config,
                k8s.newApiClient(Duration.ofSeconds(30)),
                k8s.newApiClient(Duration.ZERO),
                VendorRegistry.discover(),
                false);
        DevicePlugins plugins = new DevicePlugins(List.of("node-a", "node-b"))) {
      awaitTrue(ext::ready, Duration.ofSeconds(30), "extender watches synced");
      proxy.target("http://127.0.0.1:" + ext.port());
      k8s.createPodGroup(NS, group, 4, Map.of());
      proxy.reset();
      k8s.resetCounters();
      long t0 = System.nanoTime();
      List<String> pods = new ArrayList<>();
      for (int i = 1; i <= 4; i++) {
        String name = group + "-worker-" + i;
        pods.add(name);
        k8s.create(
            Map.of(
                "apiVersion",
                "v1",
                "kind",
                "Pod",
                "metadata",
                Map.of(
                    "name",
                    name,
                    "namespace",
                    NS,
                    "labels",
                    Map.of("scheduling.x-k8s.io/pod-group", group)),
                "spec",
                Map.of(
                    "schedulerName",
                    SCHEDULER,
                    "schedulingGroup",
                    Map.of("podGroupName", group),
                    "containers",
                    List.of(
                        Map.of(
                            "name",
                            "worker",
                            "image",
                            "ubuntu:22.04",
                            "command",
                            List.of("sleep", "3600"),
                            "resources",
                            Map.of(
                                "limits",
                                Map.of(
                                    "nvidia.com/gpu",
                                    "1",
                                    "nvidia.com/gpumem",
                                    "3000",
                                    "nvidia.com/gpucores",
                                    "30")))))));
      }
      long[] boundAt = new long[1];
      awaitTrue(
          () -> {
            if (System.nanoTime() - t0 > TimeUnit.SECONDS.toNanos(89)) {
              System.out.println(
                  "real-scheduler "
                      + tag
                      + " NOT converged: proxy "
                      + proxy.counts()
                      + ", locks a="
                      + lock("node-a")
                      + " b="
                      + lock("node-b")
                      + ", served "
                      + plugins.served());
              pods.forEach(
                  p ->
                      System.out.println(
                          "  "
                              + p
                              + " node="
                              + pod(p).at("/spec/nodeName").asText()
                              + " phase="
                              + pod(p).at("/status/phase").asText()
                              + " conditions="
                              + pod(p).at("/status/conditions")
                              + " annotations="
                              + pod(p).at("/metadata/annotations")));
            }
            long bound =
                pods.stream().filter(p -> !pod(p).at("/spec/nodeName").asText().isEmpty()).count();
            if (bound == pods.size() && boundAt[0] == 0) {
              boundAt[0] = System.nanoTime();
            }
            return pods.stream()
                .allMatch(p -> pod(p).at("/status/phase").asText().equals("Running"));
          },
          Duration.ofSeconds(90),
          tag + ": all 4 members bound and Running");
      Duration elapsed = Duration.ofNanos(System.nanoTime() - t0);
      Map<RequestKey, Long> counts = k8s.requestCounts();
      Map<String, Long> calls = proxy.counts();

      // every member bound by the scheduler through the extender, with HAMi's allocation
      for (String p : pods) {
        JsonNode pod = pod(p);
        assertThat(pod.at("/metadata/annotations/hami.io~1bind-phase").asText())
            .as(p)
            .isEqualTo("success");
        assertThat(pod.at("/metadata/annotations/hami.io~1vgpu-node").asText())
            .as(p)
            .isEqualTo(pod.at("/spec/nodeName").asText());
      }
      assertThat(calls.getOrDefault("/filter", 0L)).isGreaterThanOrEqualTo(4);
      assertThat(calls.getOrDefault("/bind", 0L)).isGreaterThanOrEqualTo(4);
      assertThat(plugins.served()).containsExactlyInAnyOrderElementsOf(pods);
      assertNoSliceOverCommitted(pods);
      awaitTrue(
          () -> lock("node-a").isEmpty() && lock("node-b").isEmpty(),
          Duration.ofSeconds(5),
          tag + ": no node lock left");

      long patches = counts.getOrDefault(new RequestKey("patch", "nodes"), 0L);
      long gets = counts.getOrDefault(new RequestKey("get", "nodes"), 0L);
      Map<String, Long> placement = new HashMap<>();
      pods.forEach(p -> placement.merge(pod(p).at("/spec/nodeName").asText(), 1L, Long::sum));
      String line =
          String.format(
              Locale.ROOT,
              "retry %s: bound %d ms, all Running %d ms; placement %s; extender calls %s; per member: "
                  + "%.2f node PATCH, %.2f node GET, %.2f pods/binding",
              retryTimeout,
              TimeUnit.NANOSECONDS.toMillis(boundAt[0] - t0),
              elapsed.toMillis(),
              placement,
              calls,
              patches / 4.0,
              gets / 4.0,
              counts.getOrDefault(new RequestKey("create", "pods/binding"), 0L) / 4.0);
      if (!tag.equals("warmup")) {
        RESULTS.put(tag, line);
      }
      System.out.println("real-scheduler " + tag + ": " + line + " all counts " + counts);
      for (String p : pods) {
        new CoreV1Api(k8s.apiClient()).deleteNamespacedPod(p, NS).gracePeriodSeconds(0).execute();
      }
      return elapsed;
    }
  }

  /**
   * Kubernetes 1.37's gang field on the Pod, as the real server stores it: k8s.io/api v0.37.2
   * {@code PodSpec.SchedulingGroup *PodSchedulingGroup `json:"schedulingGroup"`} with {@code
   * PodGroupName *string `json:"podGroupName"`} (it replaced 1.35's {@code workloadRef}, whose
   * protobuf tag 42 is tombstoned). The library's membership test reads it from client-java.
   */
  @Test
  void aPodNamingItsPodGroupInSpecSchedulingGroupIsAGangMemberWithoutTheLabel() throws Exception {
    k8s.createPodGroup(NS, "native-group", 2, Map.of());
    for (String name : List.of("native-member", "label-member", "no-member")) {
      Map<String, Object> spec =
          new HashMap<>(
              Map.of(
                  "schedulerName",
                  "not-scheduled",
                  "containers",
                  List.of(Map.of("name", "main", "image", "busybox"))));
      if (name.equals("native-member")) {
        spec.put("schedulingGroup", Map.of("podGroupName", "native-group"));
      }
      k8s.create(
          Map.of(
              "apiVersion",
              "v1",
              "kind",
              "Pod",
              "metadata",
              name.equals("label-member")
                  ? Map.of(
                      "name",
                      name,
                      "namespace",
                      NS,
                      "labels",
                      Map.of("scheduling.x-k8s.io/pod-group", "pg"))
                  : Map.of("name", name, "namespace", NS),
              "spec",
              spec));
    }
    CoreV1Api core = new CoreV1Api(k8s.apiClient());
    V1Pod nativeMember = core.readNamespacedPod("native-member", NS).execute();
    assertThat(nativeMember.getSpec().getSchedulingGroup().getPodGroupName())
        .isEqualTo("native-group");
    assertThat(KubernetesLockOwners.podGroupName(nativeMember)).contains("native-group");
    assertThat(KubernetesLockOwners.isGangMember(nativeMember)).isTrue();
    assertThat(
            KubernetesLockOwners.isGangMember(core.readNamespacedPod("label-member", NS).execute()))
        .isTrue();
    assertThat(KubernetesLockOwners.isGangMember(core.readNamespacedPod("no-member", NS).execute()))
        .isFalse();
    for (String name : List.of("native-member", "label-member", "no-member")) {
      core.deleteNamespacedPod(name, NS).gracePeriodSeconds(0).execute();
    }
  }

  /**
   * Sums each device's memory and cores over the members' allocations: never above the
   * registration.
   */
  static void assertNoSliceOverCommitted(List<String> pods) {
    Map<String, long[]> used = new HashMap<>();
    for (String p : pods) {
      JsonNode pod = pod(p);
      String node = pod.at("/spec/nodeName").asText();
      String allocated = pod.at("/metadata/annotations/hami.io~1vgpu-devices-allocated").asText();
      assertThat(allocated).as(p + " allocation").isNotEmpty();
      for (String container : allocated.split(";")) {
        for (String dev : container.split(":")) {
          if (dev.isEmpty()) {
            continue;
          }
          String[] f = dev.split(",");
          long[] u = used.computeIfAbsent(node + "/" + f[0], k -> new long[2]);
          u[0] += Long.parseLong(f[2]);
          u[1] += Long.parseLong(f[3]);
        }
      }
    }
    used.forEach(
        (dev, u) -> {
          long devmem = dev.contains("GPU-3c4a3856") ? 97887 : 46068;
          assertThat(u[0]).as(dev + " memory").isLessThanOrEqualTo(devmem);
          assertThat(u[1]).as(dev + " cores").isLessThanOrEqualTo(100);
        });
    assertThat(used).isNotEmpty();
  }

  static JsonNode pod(String name) {
    return k8s.get("pods", NS, name).orElseThrow();
  }

  static String lock(String node) {
    return lock(k8s, node);
  }

  static String lock(RealApiServer k8s, String node) {
    return k8s.get("nodes", null, node)
        .orElseThrow()
        .at("/metadata/annotations")
        .path(LOCK)
        .asText("");
  }

  interface Check {
    boolean ok() throws Exception;
  }

  static void awaitTrue(Check check, Duration timeout, String what) throws Exception {
    long end = System.nanoTime() + timeout.toNanos();
    while (!check.ok()) {
      assertThat(System.nanoTime()).as("%s within %s", what, timeout).isLessThan(end);
      Thread.sleep(20);
    }
  }

  /**
   * One simulated HAMi device plugin per node (own client, own thread): every 10 ms it lists the
   * pods bound to its node; for one in bind phase {@code allocating} it spends 20 ms in Allocate,
   * hands off through {@code DevicePluginHandoff} (which finds the pod through the node lock, marks
   * {@code bind-phase: success} and releases the lock) and marks the pod Running through the status
   * subresource, as kubelet would.
   */
  static final class DevicePlugins implements AutoCloseable {
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Set<String> served = ConcurrentHashMap.newKeySet();
    private final List<Thread> threads = new ArrayList<>();
    private final List<KubernetesHamiStack> stacks = new ArrayList<>();
    private final List<Throwable> errors = new ArrayList<>();

    DevicePlugins(List<String> nodes) {
      for (String node : nodes) {
        ApiClient client = k8s.newApiClient(Duration.ofSeconds(10));
        KubernetesHamiStack hami = KubernetesHamiStack.builder(client).watch(false).build();
        stacks.add(hami);
        Thread t = new Thread(() -> loop(node, client, hami), "device-plugin-" + node);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
    }

    private void loop(String node, ApiClient client, KubernetesHamiStack hami) {
      CoreV1Api core = new CoreV1Api(client);
      while (!stop.get()) {
        try {
          for (V1Pod p :
              core.listNamespacedPod(NS)
                  .fieldSelector("spec.nodeName=" + node)
                  .execute()
                  .getItems()) {
            Map<String, String> ann = p.getMetadata().getAnnotations();
            String name = p.getMetadata().getName();
            if (ann == null
                || !"allocating".equals(ann.get("hami.io/bind-phase"))
                || served.contains(name)) {
              continue;
            }
            Thread.sleep(20); // Allocate
            HandoffResult r = hami.devicePluginHandoff("NVIDIA").allocateAll(node);
            if (r.status() == HandoffResult.Status.COMPLETED && r.pod().isPresent()) {
              String servedPod = r.pod().get().name();
              k8s.mutate(
                  "pods",
                  NS,
                  servedPod,
                  o -> {
                    o.withObjectProperty("status").put("phase", "Running");
                    return o;
                  });
              served.add(servedPod);
            }
          }
          Thread.sleep(10);
        } catch (InterruptedException e) {
          return;
        } catch (ApiException | RuntimeException e) {
          if (stop.get()) {
            return; // interrupted by close()
          }
          synchronized (errors) {
            errors.add(e);
          }
        }
      }
    }

    Set<String> served() {
      return served;
    }

    @Override
    public void close() {
      stop.set(true);
      threads.forEach(Thread::interrupt);
      for (Thread t : threads) {
        try {
          t.join(10_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      stacks.forEach(KubernetesHamiStack::close);
      synchronized (errors) {
        assertThat(errors).as("device plugin errors").isEmpty();
      }
    }
  }

  /** Forwards kube-scheduler's extender calls to the current extender and counts them by path. */
  static final class CountingProxy implements AutoCloseable {
    private final HttpServer server;
    private final HttpClient http =
        HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
    private volatile String target;

    private CountingProxy(HttpServer server) {
      this.server = server;
    }

    static CountingProxy start() throws IOException {
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
      CountingProxy p = new CountingProxy(server);
      server.setExecutor(
          Executors.newFixedThreadPool(
              32,
              r -> {
                Thread t = new Thread(r, "extender-proxy");
                t.setDaemon(true);
                return t;
              }));
      server.createContext("/", p::handle);
      server.start();
      return p;
    }

    int port() {
      return server.getAddress().getPort();
    }

    void target(String base) {
      this.target = base;
    }

    void reset() {
      counts.clear();
    }

    Map<String, Long> counts() {
      Map<String, Long> out = new LinkedHashMap<>();
      counts.forEach((k, v) -> out.put(k, v.get()));
      return out;
    }

    private void handle(HttpExchange ex) throws IOException {
      String path = ex.getRequestURI().getPath();
      counts.computeIfAbsent(path, k -> new AtomicLong()).incrementAndGet();
      byte[] body;
      try (InputStream in = ex.getRequestBody()) {
        body = in.readAllBytes();
      }
      int code;
      byte[] answer;
      try {
        HttpResponse<byte[]> r =
            http.send(
                HttpRequest.newBuilder(URI.create(target + path))
                    .timeout(Duration.ofSeconds(35))
                    .header("Content-Type", "application/json")
                    .method(ex.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body))
                    .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        code = r.statusCode();
        answer = r.body();
      } catch (Exception e) {
        code = 502;
        answer = ("proxy: " + e).getBytes(StandardCharsets.UTF_8);
      }
      ex.getResponseHeaders().set("Content-Type", "application/json");
      ex.sendResponseHeaders(code, answer.length == 0 ? -1 : answer.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(answer);
      }
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }
}
