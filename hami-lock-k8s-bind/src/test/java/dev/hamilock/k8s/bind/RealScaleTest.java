package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.RealApiServer;
import dev.hamilock.testkit.RealApiServer.RequestTime;
import dev.hamilock.testkit.RequestKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Issue 14 item 8 on the real kube-apiserver: 500 nodes carrying HAMi registrations (fixture F-03's
 * two A40s, {@code /work/shared/fixtures/real-values.md}; split count 50, UUIDs varied per node)
 * and {@code -Dhamilock.scale.pods} pods (default 20,000, seeded with 8 parallel creates in ~90 s
 * on the 2-core machine; a smaller multiple of 40 for a quicker look), 40 per node, each bound
 * ({@code spec.nodeName}) with HAMi's allocation annotations and the {@code hami.io/vgpu-node}
 * label. It measures, against the same node holding 40 pods at 200 pods in the cluster and at the
 * full count:
 *
 * <ul>
 *   <li>the server's time per under-lock usage read ({@link KubernetesCluster#listPodsOnNode},
 *       {@link KubernetesCluster#listPodsAssignedTo}) from {@code
 *       apiserver_request_duration_seconds};
 *   <li>one bind through {@link KubernetesHamiStack#podBinder()}: wall time, requests by verb and
 *       resource (server counters), and the server's time for them.
 * </ul>
 *
 * The figures go to {@code target/real-scale.txt}. The assertions: every read returns the node's
 * pods, every bind is BOUND, a bind's requests do not grow with the cluster, and each under-lock
 * read makes the server fetch at most 4 × 40 objects (its own {@code
 * apiserver_storage_list_fetched_objects_total}), not all pods: the label-only list of {@code
 * listPodsAssignedTo} before issue 14 fetched every pod in the cluster (20,005 per list at 20,000
 * pods) and fails this.
 */
@Tag("real-apiserver")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RealScaleTest {
  static final String NS = "default";
  static final int NODES = 500;
  static final int PODS_PER_NODE = 40;
  static final int SMALL = 200;
  static final int PARALLELISM = 8;

  /**
   * Fixture F-03 (HAMi blog, {@code kubectl get node -o jsonpath}): 2× NVIDIA A40, 7-field form.
   */
  static final String F03 =
      "GPU-03f69c50-207a-2038-9b45-23cac89cb67d,10,46068,100,NVIDIA-NVIDIA A40,0,true:"
          + "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae,10,46068,100,NVIDIA-NVIDIA A40,0,true:";

  static final RequestKey LIST_PODS = new RequestKey("list", "pods");

  private final int totalPods = Integer.getInteger("hamilock.scale.pods", 20_000);
  private RealApiServer k8s;
  private KubernetesHamiStack hami;
  private final StringBuilder report = new StringBuilder();
  private int binds;

  @BeforeAll
  void start() throws Exception {
    assertThat(totalPods)
        .as("-Dhamilock.scale.pods")
        .isBetween(SMALL + PODS_PER_NODE, NODES * PODS_PER_NODE)
        .matches(n -> n % PODS_PER_NODE == 0, "a multiple of " + PODS_PER_NODE);
    k8s = RealApiServer.builder().clientReadTimeout(Duration.ofSeconds(30)).start();
    hami = KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(30))).build();
  }

  @AfterAll
  void stop() throws IOException {
    if (hami != null) {
      hami.close();
    }
    if (k8s != null) {
      k8s.close();
    }
    Path out = Path.of("target", "real-scale.txt");
    Files.createDirectories(out.getParent());
    Files.writeString(out, report.toString());
  }

  static String node(int i) {
    return String.format(Locale.ROOT, "scale-node-%03d", i);
  }

  /**
   * F-03's registration with the split count raised from 10 to 50 (HAMi's {@code
   * --device-split-count}; 10 would admit only 20 pods per node) and, from node 1 on, the last 12
   * hex digits of each UUID replaced by the node's number.
   */
  static String registration(int i) {
    String reg = F03.replace(",10,46068,", ",50,46068,");
    if (i == 0) {
      return reg;
    }
    String suffix = String.format(Locale.ROOT, "%012x", i);
    return reg.replace("23cac89cb67d", suffix).replace("f07ebb94d1ae", suffix);
  }

  static String uuid(int node, int card) {
    String[] devices = registration(node).split(":");
    return devices[card].split(",")[0];
  }

  private void parallel(int count, IntFunction<Object> task) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(PARALLELISM);
    try {
      List<Future<Object>> fs = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        int n = i;
        fs.add(pool.submit(() -> task.apply(n)));
      }
      for (Future<Object> f : fs) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private JsonNode createNode(int i) {
    return k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Node",
            "metadata",
            Map.of(
                "name",
                node(i),
                "annotations",
                Map.of(
                    "hami.io/node-nvidia-register",
                    registration(i),
                    "hami.io/node-handshake",
                    "Reported 2024-11-10 11:05:48.756620661 +0000 UTC")),
            "status",
            Map.of(
                "allocatable",
                Map.of("nvidia.com/gpu", "20", "cpu", "64", "memory", "512Gi", "pods", "110"),
                "capacity",
                Map.of("nvidia.com/gpu", "20", "cpu", "64", "memory", "512Gi", "pods", "110"))));
  }

  private static Map<String, Object> gpuContainer() {
    Map<String, String> limits = Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "1000");
    return Map.of("name", "worker", "image", "ubuntu:22.04", "resources", Map.of("limits", limits));
  }

  /**
   * Pod {@code p} of the seed: node p / 40, 1000 MiB on card p % 2, already bound and started by
   * HAMi's plugin.
   */
  private JsonNode createBoundPod(int p) {
    int n = p / PODS_PER_NODE;
    String allocation = uuid(n, p % 2) + ",NVIDIA,1000,0:;";
    Map<String, String> annotations = new LinkedHashMap<>();
    annotations.put("hami.io/vgpu-node", node(n));
    annotations.put("hami.io/vgpu-time", "1722492000");
    annotations.put("hami.io/vgpu-devices-to-allocate", allocation);
    annotations.put("hami.io/vgpu-devices-allocated", allocation);
    annotations.put("hami.io/bind-phase", "success");
    return k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Pod",
            "metadata",
            Map.of(
                "name",
                String.format(Locale.ROOT, "seed-%05d", p),
                "namespace",
                NS,
                "labels",
                Map.of("hami.io/vgpu-node", node(n)),
                "annotations",
                annotations),
            "spec",
            Map.of(
                "schedulerName",
                "hami-scheduler",
                "nodeName",
                node(n),
                "containers",
                List.of(gpuContainer()))));
  }

  private String createPendingPod(String name) {
    return k8s.create(
            Map.of(
                "apiVersion",
                "v1",
                "kind",
                "Pod",
                "metadata",
                Map.of("name", name, "namespace", NS),
                "spec",
                Map.of("schedulerName", "hami-scheduler", "containers", List.of(gpuContainer()))))
        .path("metadata")
        .path("uid")
        .asText();
  }

  private static Map<RequestKey, RequestTime> delta(
      Map<RequestKey, RequestTime> after, Map<RequestKey, RequestTime> before) {
    Map<RequestKey, RequestTime> out =
        new TreeMap<>(java.util.Comparator.comparing(RequestKey::toString));
    after.forEach(
        (k, v) -> {
          RequestTime d = v.minus(before.getOrDefault(k, new RequestTime(0, 0)));
          if (d.count() > 0) {
            out.put(k, d);
          }
        });
    return out;
  }

  private void line(String format, Object... args) {
    String l = String.format(Locale.ROOT, format, args);
    System.out.println(l);
    report.append(l).append('\n');
  }

  /** Server ms per LIST for each read, over {@code rounds} reads of node 0. */
  private Map<String, Double> measureReads(int podsInCluster, int rounds) throws Exception {
    KubernetesCluster cluster = KubernetesCluster.create(k8s.newApiClient(Duration.ofSeconds(30)));
    Map<String, Double> out = new LinkedHashMap<>();
    for (String read : List.of("listPodsOnNode", "listPodsAssignedTo")) {
      for (int warm = 0; warm < 3; warm++) {
        read(cluster, read);
      }
      Map<RequestKey, RequestTime> before = k8s.requestTimes();
      Map<String, Double> listMetricsBefore = listMetrics(k8s.metrics());
      long t0 = System.nanoTime();
      for (int r = 0; r < rounds; r++) {
        List<ClusterPod> pods = read(cluster, read);
        assertThat(pods)
            .as(read)
            .hasSizeGreaterThanOrEqualTo(PODS_PER_NODE)
            .allSatisfy(
                p ->
                    assertThat(p.view().annotations()).containsEntry("hami.io/vgpu-node", node(0)));
      }
      double clientMs = (System.nanoTime() - t0) / 1e6 / rounds;
      RequestTime t = k8s.requestTimes().get(LIST_PODS).minus(before.get(LIST_PODS));
      assertThat(t.count()).as("LIST pods served during " + read).isGreaterThanOrEqualTo(rounds);
      Map<String, Double> listMetrics = listMetrics(k8s.metrics());
      StringBuilder how = new StringBuilder();
      listMetrics.forEach(
          (k, v) -> {
            double d = v - listMetricsBefore.getOrDefault(k, 0.0);
            if (d > 0) {
              how.append(String.format(Locale.ROOT, "%n    %s %.1f per list", k, d / rounds));
            }
          });
      line(
          "%-22s pods=%6d  server %.2f ms/list (%d lists)  client %.2f ms/list%s",
          read, podsInCluster, t.meanMillis(), t.count(), clientMs, how);
      out.put(read, t.meanMillis());
      double fetched = 0;
      for (Map.Entry<String, Double> e : listMetrics.entrySet()) {
        if (e.getKey().startsWith("apiserver_storage_list_fetched_objects_total")) {
          fetched += e.getValue() - listMetricsBefore.getOrDefault(e.getKey(), 0.0);
        }
      }
      assertThat(fetched / rounds)
          .as("objects the server fetched per %s at %d pods", read, podsInCluster)
          .isPositive()
          .isLessThanOrEqualTo(4.0 * PODS_PER_NODE);
    }
    return out;
  }

  /**
   * Where the server's pod LISTs were served and how many objects they touched (watch cache or
   * etcd).
   */
  static Map<String, Double> listMetrics(String metrics) {
    Map<String, Double> out = new TreeMap<>();
    for (String l : metrics.split("\n")) {
      if (l.startsWith("#") || !l.contains("resource=\"pods\"")) {
        continue;
      }
      if (l.startsWith("apiserver_cache_list_")
          || l.startsWith("apiserver_storage_list_")
          || l.startsWith("apiserver_watch_cache_consistent_read_total")
          || l.startsWith("etcd_requests_total")) {
        int sp = l.lastIndexOf(' ');
        out.put(l.substring(0, sp), Double.parseDouble(l.substring(sp + 1)));
      }
    }
    return out;
  }

  private static List<ClusterPod> read(KubernetesCluster cluster, String read) throws Exception {
    return read.equals("listPodsOnNode")
        ? cluster.listPodsOnNode(node(0))
        : cluster.listPodsAssignedTo(node(0));
  }

  /** Binds {@code count} fresh pods to node 0, one at a time; returns requests per bind by key. */
  private Map<RequestKey, Long> measureBinds(int podsInCluster, int count) throws Exception {
    List<String> names = new ArrayList<>();
    List<String> uids = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String name = "bind-" + binds++;
      names.add(name);
      uids.add(createPendingPod(name));
    }
    Thread.sleep(1500); // lets the launcher's and the server's own background requests settle
    List<Double> wall = new ArrayList<>();
    Map<RequestKey, Long> counts = new HashMap<>();
    Map<RequestKey, RequestTime> times = new HashMap<>();
    for (int i = 0; i < count; i++) {
      k8s.resetCounters();
      Map<RequestKey, RequestTime> before = k8s.requestTimes();
      long t0 = System.nanoTime();
      BindResult r = hami.podBinder().bind(NS, names.get(i), uids.get(i), node(0));
      wall.add((System.nanoTime() - t0) / 1e6);
      k8s.requestCounts().forEach((k, v) -> counts.merge(k, v, Long::sum));
      delta(k8s.requestTimes(), before)
          .forEach(
              (k, v) ->
                  times.merge(
                      k,
                      v,
                      (a, b) -> new RequestTime(a.count() + b.count(), a.seconds() + b.seconds())));
      assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
      // what HAMi's device plugin does next, outside the measurement: hand the devices out, release
      // the node lock
      assertThat(hami.devicePluginHandoff("NVIDIA").allocateAll(node(0)).handedOut()).hasSize(1);
    }
    wall.sort(Double::compare);
    Map<RequestKey, Long> perBind =
        new TreeMap<>(java.util.Comparator.comparing(RequestKey::toString));
    counts.forEach(
        (k, v) -> {
          if (k.resource().startsWith("pods") || k.resource().startsWith("nodes")) {
            perBind.put(k, v);
          }
        });
    double serverMs = 0;
    StringBuilder byKey = new StringBuilder();
    for (Map.Entry<RequestKey, RequestTime> e : times.entrySet()) {
      RequestKey k = e.getKey();
      if ((k.resource().startsWith("pods") || k.resource().startsWith("nodes"))
          && !k.verb().equals("watch")) {
        serverMs += e.getValue().seconds() * 1000;
        byKey.append(
            String.format(
                Locale.ROOT,
                " %s %s: %d × %.2f ms;",
                k.verb(),
                k.resource(),
                e.getValue().count(),
                e.getValue().meanMillis()));
      }
    }
    line(
        "bind                   pods=%6d  %d binds: wall median %.1f ms (min %.1f, max %.1f); "
            + "server %.2f ms per bind; requests (all binds) %s;%s",
        podsInCluster,
        count,
        wall.get(count / 2),
        wall.get(0),
        wall.get(count - 1),
        serverMs / count,
        perBind,
        byKey);
    return perBind;
  }

  @Test
  void theUnderLockReadsAndABindAtScale() throws Exception {
    long t0 = System.nanoTime();
    parallel(NODES, this::createNode);
    line("seeded %d nodes in %.1f s", NODES, (System.nanoTime() - t0) / 1e9);
    t0 = System.nanoTime();
    parallel(SMALL, this::createBoundPod);
    line("seeded %d pods in %.1f s", SMALL, (System.nanoTime() - t0) / 1e9);

    Map<String, Double> small = measureReads(SMALL, 50);
    Map<RequestKey, Long> smallBind = measureBinds(SMALL, 5);

    t0 = System.nanoTime();
    parallel(totalPods - SMALL, i -> createBoundPod(SMALL + i));
    line(
        "seeded %d more pods (%d in all) in %.1f s",
        totalPods - SMALL, totalPods, (System.nanoTime() - t0) / 1e9);

    Map<String, Double> large = measureReads(totalPods, 50);
    Map<RequestKey, Long> largeBind = measureBinds(totalPods, 5);

    Map<String, Double> ratio = new HashMap<>();
    small.forEach((k, v) -> ratio.put(k, large.get(k) / v));
    line("server time per list, %d pods vs %d pods: %s", totalPods, SMALL, ratio);
    // A bind sends the same requests whatever the cluster's size.
    assertThat(largeBind)
        .as("requests of 5 binds at %d pods vs %d", totalPods, SMALL)
        .isEqualTo(smallBind);
  }
}
