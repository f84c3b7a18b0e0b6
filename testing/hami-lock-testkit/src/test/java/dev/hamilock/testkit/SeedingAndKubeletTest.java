package dev.hamilock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link TestPod}, {@link TestNode}, {@link ApiServerEmulator#newApiClient()} and {@link
 * SimulatedKubelet}.
 */
class SeedingAndKubeletTest {
  private final ApiServerEmulator k8s = ApiServerEmulator.start();

  @AfterEach
  void stop() {
    k8s.close();
  }

  @Test
  void seededPodReadsBackThroughClientJavaWithLabelsAnnotationsResourcesAndStatus()
      throws Exception {
    k8s.createPod(
        TestPod.named("team-a", "gang-worker-1")
            .label("scheduling.x-k8s.io/pod-group", "gang-training")
            .annotation("hami.io/gpu-scheduler-policy", "spread")
            .initContainer("setup", "busybox")
            .request("cpu", "100m")
            .sidecarContainer("proxy", "envoy")
            .container("worker", "cuda:12.4")
            .limit("nvidia.com/gpu", "1")
            .limit("nvidia.com/gpumem", "3000")
            .request("cpu", "500m")
            .schedulerName("hami-scheduler")
            .nodeName("gpu-node-a")
            .phase("Running"));

    V1Pod p = new CoreV1Api(k8s.apiClient()).readNamespacedPod("gang-worker-1", "team-a").execute();

    assertThat(p.getMetadata().getLabels())
        .containsExactly(Map.entry("scheduling.x-k8s.io/pod-group", "gang-training"));
    assertThat(p.getMetadata().getAnnotations())
        .containsEntry("hami.io/gpu-scheduler-policy", "spread");
    assertThat(p.getMetadata().getUid()).isNotBlank();
    assertThat(p.getSpec().getSchedulerName()).isEqualTo("hami-scheduler");
    assertThat(p.getSpec().getNodeName()).isEqualTo("gpu-node-a");
    assertThat(p.getStatus().getPhase()).isEqualTo("Running");
    assertThat(p.getSpec().getInitContainers()).hasSize(2);
    assertThat(p.getSpec().getInitContainers().get(0).getResources().getRequests())
        .containsEntry("cpu", new Quantity("100m"));
    assertThat(p.getSpec().getInitContainers().get(0).getRestartPolicy()).isNull();
    assertThat(p.getSpec().getInitContainers().get(1).getName()).isEqualTo("proxy");
    assertThat(p.getSpec().getInitContainers().get(1).getRestartPolicy())
        .as("a native sidecar")
        .isEqualTo("Always");
    assertThat(p.getSpec().getContainers())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getName()).isEqualTo("worker");
              assertThat(c.getImage()).isEqualTo("cuda:12.4");
              assertThat(c.getResources().getLimits())
                  .containsEntry("nvidia.com/gpu", new Quantity("1"))
                  .containsEntry("nvidia.com/gpumem", new Quantity("3000"));
              assertThat(c.getResources().getRequests())
                  .containsExactly(Map.entry("cpu", new Quantity("500m")));
            });
  }

  @Test
  void aPodWithoutContainersGetsTheDefaultOneAndLimitsWithoutContainerGoThere() throws Exception {
    k8s.createPod(TestPod.named("default", "p").limit("nvidia.com/gpu", "2"));
    V1Pod p = new CoreV1Api(k8s.apiClient()).readNamespacedPod("p", "default").execute();
    assertThat(p.getSpec().getContainers())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getName()).isEqualTo("main");
              assertThat(c.getResources().getLimits())
                  .containsExactly(Map.entry("nvidia.com/gpu", new Quantity("2")));
            });
    assertThat(p.getSpec().getNodeName()).isNull();
    assertThat(p.getStatus().getPhase()).isEqualTo("Pending");
  }

  @Test
  void seededNodeReadsBackWithCapacityAllocatableAndConditions() throws Exception {
    String register =
        "GPU-03f69c50-207a-2038-9b45-23cac89cb67d,10,46068,100,NVIDIA-NVIDIA A40,0,true:";
    k8s.createNode(
        TestNode.named("gpu-node-a")
            .label("gpu", "on")
            .annotation("hami.io/node-nvidia-register", register)
            .resource("nvidia.com/gpu", "10")
            .capacity("cpu", "8")
            .allocatable("cpu", "7500m"));
    k8s.createNode(TestNode.named("cordoned").ready(false).unschedulable(true));

    CoreV1Api api = new CoreV1Api(k8s.apiClient());
    V1Node n = api.readNode("gpu-node-a").execute();
    assertThat(n.getMetadata().getLabels()).containsEntry("gpu", "on");
    assertThat(n.getMetadata().getAnnotations())
        .containsEntry("hami.io/node-nvidia-register", register);
    assertThat(n.getStatus().getCapacity())
        .containsEntry("nvidia.com/gpu", new Quantity("10"))
        .containsEntry("cpu", new Quantity("8"));
    assertThat(n.getStatus().getAllocatable())
        .containsEntry("nvidia.com/gpu", new Quantity("10"))
        .containsEntry("cpu", new Quantity("7500m"));
    assertThat(n.getStatus().getConditions())
        .singleElement()
        .satisfies(c -> assertThat(c.getType() + "=" + c.getStatus()).isEqualTo("Ready=True"));
    V1Node c = api.readNode("cordoned").execute();
    assertThat(c.getSpec().getUnschedulable()).isTrue();
    assertThat(c.getStatus().getConditions().get(0).getStatus()).isEqualTo("False");
  }

  @Test
  void badSeedValuesAreRejectedByName() {
    assertThatThrownBy(() -> TestPod.named("default", " "))
        .hasMessageContaining("name must not be blank");
    assertThatThrownBy(() -> TestPod.named("default", "p").phase("Runing"))
        .hasMessageContaining("\"Runing\"");
    assertThatThrownBy(() -> TestNode.named("n").resource("nvidia.com/gpu", ""))
        .hasMessageContaining("quantity");
    k8s.createNode(TestNode.named("n"));
    assertThatThrownBy(() -> k8s.createNode(TestNode.named("n")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already exists");
  }

  @Test
  void newApiClientsHaveTheirOwnConnectionPools() throws Exception {
    ApiClient a = k8s.newApiClient();
    ApiClient b = k8s.newApiClient();
    assertThat(a).isNotSameAs(b).isNotSameAs(k8s.apiClient());
    assertThat(a.getHttpClient().connectionPool()).isNotSameAs(b.getHttpClient().connectionPool());
    assertThat(a.getReadTimeout()).isEqualTo(10_000);
    k8s.createNode(TestNode.named("n"));
    new CoreV1Api(a).readNode("n").execute();
    assertThat(a.getHttpClient().connectionPool().connectionCount()).isEqualTo(1);
    assertThat(b.getHttpClient().connectionPool().connectionCount()).isZero();
  }

  @Test
  void kubeletAdmitsPodsBoundToItsNodeInBindingOrderOnceEachAfterTheAllocateTime()
      throws Exception {
    k8s.createPod(TestPod.named("default", "already-there").nodeName("gpu-node-a"));
    k8s.createPod(TestPod.named("default", "elsewhere").nodeName("gpu-node-b"));
    List<String> calls = new CopyOnWriteArrayList<>();
    try (SimulatedKubelet<String> kubelet =
        SimulatedKubelet.start(
            k8s,
            "gpu-node-a",
            Duration.ofMillis(5),
            (node, pod) -> {
              calls.add(node + ":" + pod.name());
              if (pod.name().equals("w-2")) {
                throw new IllegalStateException("simulated Allocate failure");
              }
              return "served " + pod.name();
            })) {
      for (String name : List.of("w-1", "w-2", "w-3")) {
        k8s.createPod(TestPod.named("default", name));
        k8s.mutate(
            "pods",
            "default",
            name,
            p -> {
              ((com.fasterxml.jackson.databind.node.ObjectNode) p.path("spec"))
                  .put("nodeName", "gpu-node-a");
              return p;
            });
      }
      // a later update of a bound pod is not a second admission
      k8s.mutate(
          "pods",
          "default",
          "w-1",
          p -> {
            ((com.fasterxml.jackson.databind.node.ObjectNode) p.path("metadata"))
                .putObject("labels")
                .put("x", "y");
            return p;
          });

      List<SimulatedKubelet.Admission<String>> done =
          kubelet.awaitAdmissions(4, Duration.ofSeconds(30));

      assertThat(done)
          .extracting(a -> a.pod().name())
          .containsExactly("already-there", "w-1", "w-2", "w-3");
      assertThat(done.get(1).result()).isEqualTo("served w-1");
      assertThat(done.get(2).succeeded()).isFalse();
      assertThat(done.get(2).failure()).hasMessage("simulated Allocate failure");
      assertThat(done.get(3).succeeded()).isTrue();
      assertThat(done.get(1).pod().uid()).isNotBlank();
      assertThat(k8s.openWatches()).as("in-process: not an HTTP watch").isZero();
      assertThat(k8s.dropWatches()).isZero();
      assertThatThrownBy(() -> kubelet.awaitAdmissions(5, Duration.ofMillis(50)))
          .isInstanceOf(TimeoutException.class)
          .hasMessageContaining("4 of 5");
      assertThat(calls)
          .containsExactly(
              "gpu-node-a:already-there", "gpu-node-a:w-1", "gpu-node-a:w-2", "gpu-node-a:w-3");
    }
  }

  @Test
  void aClosedKubeletAdmitsNothingMore() throws Exception {
    List<String> calls = new CopyOnWriteArrayList<>();
    SimulatedKubelet<String> kubelet =
        SimulatedKubelet.start(
            k8s,
            "gpu-node-a",
            Duration.ZERO,
            (node, pod) -> {
              calls.add(pod.name());
              return pod.name();
            });
    k8s.createPod(TestPod.named("default", "first").nodeName("gpu-node-a"));
    kubelet.awaitAdmissions(1, Duration.ofSeconds(30));
    kubelet.close();
    k8s.createPod(TestPod.named("default", "after-close").nodeName("gpu-node-a"));
    // the store notifies watchers synchronously on write: an unregistered kubelet gets nothing
    assertThat(kubelet.admissions()).extracting(a -> a.pod().name()).containsExactly("first");
    assertThat(calls).containsExactly("first");
    assertThatThrownBy(() -> SimulatedKubelet.start(k8s, "n", Duration.ofMillis(-1), (n, p) -> p))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("allocateTime");
  }
}
