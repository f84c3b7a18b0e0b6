package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.RequestKey;
import io.kubernetes.client.openapi.ApiClient;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link KubernetesCluster#readDra} (issue 28 item 1): where {@code resource.k8s.io/v1} is served,
 * fresh lists read as views; where it is not, one discovery request per {@link
 * dev.hamilock.bind.cluster.KubernetesWire.DraReads#REPROBE} and none per bind.
 */
class Issue28DraReadsTest {
  static final String DRA = "/apis/resource.k8s.io/v1";
  static final String UUID = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448";

  /** Path to canned JSON answer; others are 404. */
  final Map<String, String> canned = new ConcurrentHashMap<>();

  final Map<String, Integer> status = new ConcurrentHashMap<>();

  /**
   * Path to the answer of a {@code resourceVersion=0} LIST where the watch cache lags
   * (kube-apiserver may serve such a LIST "at any resource version"); others get {@link #canned}.
   */
  final Map<String, String> lagging = new ConcurrentHashMap<>();

  /** Every request the front server got: path and query. */
  final List<String> requests = new CopyOnWriteArrayList<>();

  private HttpServer front;

  @AfterEach
  void stop() {
    if (front != null) {
      front.stop(0);
    }
  }

  KubernetesCluster cluster() throws IOException {
    front = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    front.createContext(
        "/",
        ex -> {
          String path = ex.getRequestURI().getPath();
          String query = ex.getRequestURI().getRawQuery();
          requests.add(query == null ? path : path + "?" + query);
          String body =
              query != null && query.contains("resourceVersion=0") && lagging.containsKey(path)
                  ? lagging.get(path)
                  : canned.get(path);
          if (body == null) {
            answer(ex, 404, "{'kind':'Status','code':404,'reason':'NotFound'}");
          } else {
            answer(ex, status.getOrDefault(path, 200), body);
          }
        });
    front.start();
    return KubernetesCluster.create(
        new ApiClient().setBasePath("http://127.0.0.1:" + front.getAddress().getPort()),
        KubernetesCluster.DEFAULT_REQUEST_TIMEOUT,
        1);
  }

  private static void answer(HttpExchange ex, int code, String json) throws IOException {
    byte[] b = json.replace('\'', '"').getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(code, b.length);
    ex.getResponseBody().write(b);
    ex.close();
  }

  void serveDra() {
    canned.put(DRA, "{'kind':'APIResourceList','groupVersion':'resource.k8s.io/v1'}");
    canned.put(
        DRA + "/resourceslices",
        "{'items':[{'metadata':{'name':'node-a-gpu'},'spec':{'driver':'gpu.nvidia.com',"
            + "'nodeName':'node-a','pool':{'name':'node-a','generation':1},'devices':[{'name':"
            + "'gpu-0','attributes':{'uuid':{'string':'"
            + UUID
            + "'}}}]}}]}");
    canned.put(
        DRA + "/resourceclaims",
        "{'items':[{'metadata':{'name':'c1','namespace':'ml','uid':'u1'},'status':{'allocation':"
            + "{'devices':{'results':[{'request':'gpu','driver':'gpu.nvidia.com','pool':'node-a',"
            + "'device':'gpu-0'}]}}}}]}");
  }

  @Test
  void whereDraIsServedEveryReadListsSlicesAndClaimsAndOnlyTheFiltersFromTheWatchCache()
      throws Exception {
    serveDra();
    KubernetesCluster k = cluster();

    DraObjects one = k.readDra(List.of("node-a"));
    DraObjects both = k.readDraForFilter(List.of("node-a", "node-b"));

    assertThat(one.slices())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.nodeName()).isEqualTo("node-a");
              assertThat(s.devices())
                  .extracting(ResourceSliceView.Device::attributes)
                  .containsExactly(Map.of("uuid", UUID));
            });
    assertThat(one.claims())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.key()).isEqualTo("ml/c1");
              assertThat(c.results())
                  .extracting(ResourceClaimView.Result::device)
                  .containsExactly("gpu-0");
            });
    assertThat(both).isEqualTo(one);
    assertThat(requests)
        .containsExactly(
            DRA,
            DRA + "/resourceslices?fieldSelector=spec.nodeName%3Dnode-a",
            DRA + "/resourceclaims",
            DRA + "/resourceslices?resourceVersion=0",
            DRA + "/resourceclaims?resourceVersion=0");
  }

  @Test
  void withoutResourceK8sIoTheFirstReadAsksOnceAndEveryLaterOneSendsNothing() throws Exception {
    KubernetesCluster k = cluster();

    for (int i = 0; i < 3; i++) {
      assertThat(k.readDra(List.of("node-a"))).isEqualTo(DraObjects.NONE);
    }
    assertThat(k.readDra(List.of())).isEqualTo(DraObjects.NONE);

    assertThat(requests).containsExactly(DRA);
  }

  @Test
  void forbiddenClaimsFailTheReadInsteadOfCountingNothing() throws Exception {
    serveDra();
    status.put(DRA + "/resourceclaims", 403);
    KubernetesCluster k = cluster();

    assertThatThrownBy(() -> k.readDra(List.of("node-a")))
        .isInstanceOfSatisfying(
            ClusterException.class,
            e -> assertThat(e.answer().kind()).isEqualTo(ClusterException.Kind.REJECTED))
        .hasMessageContaining("LIST resourceclaims");
  }

  @Test
  void onTheEmulatorWithoutResourceK8sIoABindSendsNoRequestMoreThanBefore() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start();
        KubernetesHamiStack hami =
            KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).build()) {
      for (String n : List.of("gpu-1", "gpu-2", "gpu-3")) {
        EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(n, "GPU-" + n));
      }
      Map<RequestKey, Long> perBind = null;
      long discoveries = 0;
      k8s.resetCounters();
      for (String n : List.of("gpu-1", "gpu-2", "gpu-3")) {
        String pod = "p-" + n;
        var view =
            EmulatorObjects.pod(
                    EmulatorObjects.createPod(
                        k8s, PodBinderOverHttpTest.guidePod(pod, Map.of(), Map.of())))
                .view();
        FilterDecision d = hami.extenderFilter().filter(view, List.of(n));
        assertThat(d.node()).contains(n);
        discoveries += k8s.requestCount("get", DRA);
        k8s.resetCounters();
        BindResult r = hami.podBinder().bind("default", pod, view.uid(), n);
        assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
        Map<RequestKey, Long> counts = new java.util.HashMap<>(k8s.requestCounts());
        // the stack's node watch opens in the background, during whichever bind: not a bind's
        counts.keySet().removeIf(key -> key.verb().equals("watch"));
        assertThat(counts.keySet())
            .as("%s", counts)
            .noneMatch(key -> key.resource().contains("resource.k8s.io"));
        if (perBind != null) {
          assertThat(counts).isEqualTo(perBind);
        }
        perBind = counts;
      }
      // GET pod, GET node, PATCH node (lock), 2 LIST pods, PATCH pod, GET node (the lock still
      // held right before the Binding), POST binding: as without DRA reads
      assertThat(perBind.values().stream().mapToLong(Long::longValue).sum())
          .as("%s", perBind)
          .isEqualTo(8);
      assertThat(discoveries).isEqualTo(1);
    }
  }

  @Test
  void aPodWhoseGpusKubeSchedulerDelegatedToDraIsBoundWithoutANodeLock() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start();
        KubernetesHamiStack hami =
            KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).build()) {
      EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode("gpu-1", "GPU-gpu-1"));
      var view =
          EmulatorObjects.pod(
                  EmulatorObjects.createPod(
                      k8s, PodBinderOverHttpTest.guidePod("p1", Map.of(), Map.of())))
              .view();
      // what kube-scheduler's DynamicResources plugin writes before the Binding
      k8s.mutate(
          "pods",
          "default",
          "p1",
          p -> {
            var mapping =
                p.with("status")
                    .putObject("extendedResourceClaimStatus")
                    .put("resourceClaimName", "p1-extended-resources-abc")
                    .putArray("requestMappings")
                    .addObject();
            mapping
                .put("containerName", "worker")
                .put("resourceName", "nvidia.com/gpu")
                .put("requestName", "container-0-request-0");
            return p;
          });
      k8s.resetCounters();

      BindResult r = hami.podBinder().bind("default", "p1", view.uid(), "gpu-1");

      assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
      assertThat(r.locksHeld()).isFalse();
      assertThat(k8s.requestCount("patch", "nodes")).isZero();
      assertThat(EmulatorObjects.lock(k8s, "gpu-1")).isNull();
    }
  }

  /**
   * A reviewer's finding against bbb0148, which read DRA objects from the watch cache everywhere: a
   * claim stored before the bind's read must be counted. The bind's re-fit reads DRA "after the
   * lock: a claim allocated since the Filter is counted" ({@code AllocationChoice}); kube-apiserver
   * answers a {@code resourceVersion=0} LIST "at any resource version ... strong consistency is not
   * required" (Kubernetes API concepts, semantics for get and list; an HA control plane's other
   * apiserver or a lagging watch cache serves an older state), a LIST without resourceVersion is
   * the consistent (most recent) read. Here the watch cache has not yet seen claim c1 (allocated on
   * gpu-0) that etcd holds: the read misses it, so the re-fit can place a pod on a card
   * kube-scheduler already gave away (a card over-committed).
   */
  @Test
  void aClaimStoredBeforeTheBindsReadIsCountedWhileTheWatchCacheLags() throws Exception {
    serveDra();
    lagging.put(DRA + "/resourceclaims", "{'items':[]}");
    KubernetesCluster k = cluster();

    DraObjects read = k.readDra(List.of("node-a"));

    assertThat(read.claims())
        .as("claims read by %s", requests)
        .extracting(ResourceClaimView::key)
        .containsExactly("ml/c1");
  }
}
