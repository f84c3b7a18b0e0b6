package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.HamiStack;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.fabric8.Fabric8LockStack;
import dev.hamilock.fabric8.bind.Fabric8Cluster;
import dev.hamilock.fabric8.bind.Fabric8HamiStack;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.TestPod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The bind flow's writes on both clients when the answer is not "done" (found by a reviewer,
 * breaker6). fabric8's cluster ports repeated every write answered 5xx, 429 or not at all: a pod
 * patch conditioned on the resourceVersion as read that was applied but answered 500 was sent again
 * and refused 409, reported as {@link ClusterException.Kind#CONFLICT} ("nothing written", {@link
 * MetadataPatch}) although it was written, where client-java reports UNAVAILABLE ("may have been
 * applied"). The device-plugin hand-off reads a CONFLICT as "another plugin process served the pod
 * meanwhile" and looks again, so its own lost write made it hand container 1's devices to container
 * 0's Allocate and report the pod COMPLETED (container 0's entry marked served, never handed out).
 * And an eviction refused by a PodDisruptionBudget (429, a refusal, not a rate limit) was sent 5
 * times where client-java sends it once (with the budget's {@code Retry-After: 10} of eviction.go,
 * which fabric8's StandardHttpClient waits uncapped, about 40 s). Writes now go through fabric8
 * once.
 */
class WritesSentOnceOnBothClientsTest {

  private ApiServerEmulator k8s;
  private KubernetesClient fabric8;
  private Map<String, KubernetesReadsAndWrites> ports;

  /** Both port halves of one client. */
  private record KubernetesReadsAndWrites(ClusterReader reader, ClusterWriter writer) {}

  @BeforeEach
  void start() throws Exception {
    k8s = ApiServerEmulator.start();
    Config config = Config.fromKubeconfig(Files.readString(k8s.kubeconfigFile()));
    config.setRequestTimeout(5_000); // fabric8's default repetitions: whatever they say
    fabric8 = new KubernetesClientBuilder().withConfig(config).build();
    KubernetesCluster java = KubernetesCluster.create(k8s.newApiClient(Duration.ofSeconds(10)));
    Fabric8Cluster f8 = Fabric8Cluster.create(fabric8);
    ports = new LinkedHashMap<>();
    ports.put("client-java", new KubernetesReadsAndWrites(java, java));
    ports.put("fabric8", new KubernetesReadsAndWrites(f8, f8));
  }

  @AfterEach
  void stop() {
    fabric8.close();
    k8s.close();
  }

  @Test
  void aConditionalPodPatchAppliedButAnswered500MayHaveBeenAppliedOnBothClients() throws Exception {
    for (var p : ports.entrySet()) {
      String name = "w-" + p.getKey();
      k8s.createPod(TestPod.named("default", name));
      ClusterPod read = p.getValue().reader().readPod("default", name).orElseThrow();
      MetadataPatch patch =
          MetadataPatch.builder()
              .expectedUid(read.view().uid())
              .expectedResourceVersion(read.resourceVersion())
              .setAnnotation("example.com/served", "0")
              .build();
      k8s.addFault(
          FaultRule.matching()
              .verb("patch")
              .resource("pods")
              .times(1)
              .respondAfterApply(
                  500,
                  "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                      + "\"message\":\"etcdserver: request timed out\",\"code\":500}"));
      Throwable t =
          catchThrowable(() -> p.getValue().writer().patchPodMetadata("default", name, patch));
      assertThat(t)
          .as(p.getKey())
          .isInstanceOfSatisfying(
              ClusterException.class,
              e -> assertThat(e.kind()).isEqualTo(ClusterException.Kind.UNAVAILABLE));
      assertThat(
              k8s.get("pods", "default", name)
                  .orElseThrow()
                  .path("metadata")
                  .path("annotations")
                  .path("example.com/served")
                  .asText())
          .as("%s: the write was applied", p.getKey())
          .isEqualTo("0");
      k8s.clearFaults();
    }
  }

  @Test
  void anEvictionRefusedByADisruptionBudgetIsSentOnceOnBothClients() {
    for (var p : ports.entrySet()) {
      String name = "v-" + p.getKey();
      k8s.createPod(TestPod.named("default", name).phase("Running"));
      String uid =
          k8s.get("pods", "default", name).orElseThrow().path("metadata").path("uid").asText();
      k8s.addFault(
          FaultRule.matching()
              .verb("create")
              .resource("pods/eviction")
              .respondStatus(
                  429,
                  "TooManyRequests",
                  "Cannot evict pod as it would violate the pod's disruption budget."));
      long before = evictions();
      Throwable t = catchThrowable(() -> p.getValue().writer().evictPod("default", name, uid));
      assertThat(t).as(p.getKey()).isInstanceOf(ClusterException.class);
      assertThat(evictions() - before).as("%s: evictions sent", p.getKey()).isEqualTo(1);
      k8s.clearFaults();
    }
  }

  @Test
  void aHandOffWhoseWriteWasAppliedButAnswered500NeverServesTheNextContainerOnFabric8()
      throws Exception {
    EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode("n1", "GPU-1"));
    ContainerView gpu =
        new ContainerView(
            "c",
            "cuda",
            Map.of(
                "nvidia.com/gpu",
                BigDecimal.ONE,
                "nvidia.com/gpumem",
                BigDecimal.valueOf(3000),
                "nvidia.com/gpucores",
                BigDecimal.valueOf(30)),
            Map.of());
    EmulatorObjects.createPod(
        k8s,
        PodView.builder("default", "two")
            .containers(
                List.of(
                    new ContainerView("c0", "cuda", gpu.limits(), Map.of()),
                    new ContainerView("c1", "cuda", gpu.limits(), Map.of())))
            .build());
    String uid = EmulatorObjects.readPod(k8s, "default", "two").uid();
    try (KubernetesHamiStack scheduler =
            KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                .watch(false)
                .build();
        HamiStack plugin =
            Fabric8HamiStack.builder(fabric8)
                .backend(Fabric8LockStack.backend(fabric8, Optional.empty()))
                .build()) {
      assertThat(scheduler.podBinder().bind("default", "two", uid, "n1").outcome())
          .isEqualTo(BindOutcome.BOUND);
      // kubelet's Allocate for container 0: the to-allocate write applies, its answer is a 500
      k8s.addFault(
          FaultRule.matching()
              .verb("patch")
              .resource("pods")
              .times(1)
              .respondAfterApply(500, "{\"kind\":\"Status\",\"code\":500}"));
      HandoffResult first = plugin.devicePluginHandoff("NVIDIA").allocate("n1", List.of(1));
      assertThat(first.handedOut())
          .as("container 0's Allocate: %s", first)
          .allSatisfy(a -> assertThat(a.containerIndex()).isZero());
    }
  }

  private long evictions() {
    return k8s.requestCounts().entrySet().stream()
        .filter(e -> e.getKey().resource().equals("pods/eviction"))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }
}
