package dev.hamilock.k8s.readme;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.readme.ReadmeSnippet;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.k8s.view.KubernetesViews;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.SimulatedKubelet;
import dev.hamilock.testkit.TestNode;
import dev.hamilock.testkit.TestPod;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The README's second sample, "The whole bind flow", compiled and run: two GPU nodes with HAMi
 * registrations published in HAMi issues (fixtures F-03: 2× A40, F-01: 1× T4), a PodGroup-labelled
 * gang of four, filtered and bound concurrently by two scheduler replicas through {@link
 * KubernetesHamiStack}, started by simulated kubelets whose device plugin is the library's {@code
 * DevicePluginHandoff}. Its lines are checked against the README by {@link ReadmeSnippet}.
 */
class ReadmeBindFlowTest {

  @Test
  void theWholeBindFlowBindsTheGangFromTwoReplicasAndTheDevicePluginReleasesEveryLock()
      throws Exception {
    // README:begin
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      k8s.createNode(
          TestNode.named("gpu-node-a")
              .annotation(
                  "hami.io/node-nvidia-register", // 2x A40
                  "GPU-03f69c50-207a-2038-9b45-23cac89cb67d,10,46068,100,NVIDIA-NVIDIA A40,0,true:"
                      + "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae,10,46068,100,NVIDIA-NVIDIA A40,0,true:"));
      k8s.createNode(
          TestNode.named("gpu-node-b")
              .annotation(
                  "hami.io/node-nvidia-register", // 1x T4
                  "GPU-9a3603f4-f66e-d48b-11ea-13e327064cca,10,15360,100,NVIDIA-Tesla T4,0,true:"));
      List<String> gang = List.of("worker-0", "worker-1", "worker-2", "worker-3");
      for (String name : gang) {
        k8s.createPod(
            TestPod.named("default", name)
                .label("scheduling.x-k8s.io/pod-group", "training") // a label, not an annotation
                .limit("nvidia.com/gpu", "1")
                .limit("nvidia.com/gpumem", "3000")
                .limit("nvidia.com/gpucores", "30"));
      }

      try (KubernetesHamiStack replicaA = KubernetesHamiStack.builder(k8s.newApiClient()).build();
          KubernetesHamiStack replicaB = KubernetesHamiStack.builder(k8s.newApiClient()).build();
          KubernetesHamiStack plugin =
              KubernetesHamiStack.builder(k8s.newApiClient()).watch(false).build();
          // each node's kubelet + device plugin: Allocate 20 ms after the bind; the hand-off reads
          // the allocation and releases the node lock for the next gang member
          SimulatedKubelet<HandoffResult> kubeletA =
              SimulatedKubelet.start(
                  k8s,
                  "gpu-node-a",
                  Duration.ofMillis(20),
                  (node, pod) -> plugin.devicePluginHandoff("NVIDIA").allocateAll(node));
          SimulatedKubelet<HandoffResult> kubeletB =
              SimulatedKubelet.start(
                  k8s,
                  "gpu-node-b",
                  Duration.ofMillis(20),
                  (node, pod) -> plugin.devicePluginHandoff("NVIDIA").allocateAll(node))) {
        CoreV1Api api =
            new CoreV1Api(k8s.newApiClient()); // the scheduler's own reads (its informer)
        ExecutorService scheduler = Executors.newFixedThreadPool(gang.size());
        List<Future<BindResult>> binds = new ArrayList<>();
        for (int i = 0; i < gang.size(); i++) { // every member at once, as Coscheduling
          KubernetesHamiStack replica = i % 2 == 0 ? replicaA : replicaB;
          String name = gang.get(i);
          binds.add(
              scheduler.submit(
                  () -> {
                    PodView pod =
                        KubernetesViews.podView(api.readNamespacedPod(name, "default").execute());
                    FilterDecision filtered =
                        replica.extenderFilter().filter(pod, List.of("gpu-node-a", "gpu-node-b"));
                    return replica
                        .podBinder()
                        .bind("default", name, pod.uid(), filtered.node().orElseThrow());
                  }));
        }
        List<BindResult> bound = new ArrayList<>();
        for (Future<BindResult> b : binds) {
          bound.add(b.get()); // outcome() BOUND, node(), lockAttempts(), timings()
        }
        scheduler.shutdown();
        List<HandoffResult> handedOut =
            new ArrayList<>(); // status() COMPLETED, lockReleased() true
        for (SimulatedKubelet<HandoffResult> kubelet : List.of(kubeletA, kubeletB)) {
          int podsThere = (int) bound.stream().filter(r -> r.node().equals(kubelet.node())).count();
          kubelet
              .awaitAdmissions(podsThere, Duration.ofSeconds(30))
              .forEach(a -> handedOut.add(a.result()));
        }
        // README:end
        assertThat(bound)
            .extracting(BindResult::outcome)
            .as("%s", bound)
            .containsOnly(BindOutcome.BOUND);
        assertThat(bound).allSatisfy(r -> assertThat(r.lockAttempts()).isPositive());
        assertThat(handedOut)
            .as("every pod's Allocate: %s", handedOut)
            .hasSize(4)
            .allSatisfy(
                h -> {
                  assertThat(h.status()).isEqualTo(HandoffResult.Status.COMPLETED);
                  assertThat(h.lockReleased()).isTrue();
                  assertThat(h.handedOut())
                      .singleElement()
                      .satisfies(
                          c ->
                              assertThat(c.devices())
                                  .singleElement()
                                  .satisfies(
                                      d ->
                                          assertThat(d.usedmem() + "MiB/" + d.usedcores() + "%")
                                              .isEqualTo("3000MiB/30%")));
                });
        assertThat(handedOut)
            .extracting(h -> h.pod().orElseThrow().name())
            .containsExactlyInAnyOrderElementsOf(gang);
      }
      for (String node : List.of("gpu-node-a", "gpu-node-b")) {
        assertThat(
                k8s.get("nodes", null, node)
                    .orElseThrow()
                    .path("metadata")
                    .path("annotations")
                    .has("hami.io/mutex.lock"))
            .as("lock left on %s", node)
            .isFalse();
      }
      for (String name : List.of("worker-0", "worker-1", "worker-2", "worker-3")) {
        assertThat(
                k8s.get("pods", "default", name)
                    .orElseThrow()
                    .path("metadata")
                    .path("annotations")
                    .path("hami.io/bind-phase")
                    .asText())
            .as("bind phase of %s", name)
            .isEqualTo("success");
      }
    }
  }

  @Test
  void readmeShowsTheSnippetVerbatim() throws Exception {
    ReadmeSnippet.assertShownIn(
        Path.of("src/test/java/dev/hamilock/k8s/readme/ReadmeBindFlowTest.java"),
        Path.of("../README.md"));
  }
}
