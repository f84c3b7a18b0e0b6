package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The device plugin's hand-off over HTTP, in its own process (its own {@link KubernetesHamiStack}):
 * exact API requests. The lock value it reads to find the pod (spec §3.1) is the one it releases
 * with, so the lock costs one node GET and one node PATCH (before: two GETs and one PATCH).
 */
class DevicePluginReleaseCostTest {

  @Test
  void aHandOffReadsTheNodeOnceAndReleasesTheLockWithOnePatch() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start();
        KubernetesHamiStack scheduler =
            KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                .watch(false)
                .build();
        KubernetesHamiStack plugin =
            KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
                .watch(false)
                .build()) {
      EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode("n1", "GPU-1"));
      EmulatorObjects.createPod(k8s, PodBinderOverHttpTest.guidePod("p1", Map.of(), Map.of()));
      var pod = EmulatorObjects.readPod(k8s, "default", "p1");
      assertThat(scheduler.podBinder().bind("default", "p1", pod.uid(), "n1").outcome())
          .isEqualTo(BindOutcome.BOUND);
      assertThat(EmulatorObjects.lock(k8s, "n1")).endsWith(",default,p1");
      k8s.resetCounters();

      HandoffResult h = plugin.devicePluginHandoff("NVIDIA").allocateAll("n1");

      assertThat(h.status()).isEqualTo(HandoffResult.Status.COMPLETED);
      assertThat(h.lockReleased()).isTrue();
      assertThat(EmulatorObjects.lock(k8s, "n1")).isNull();
      assertThat(k8s.requestCount("get", "nodes"))
          .as("the lookup's read, reused by the release")
          .isEqualTo(1);
      assertThat(k8s.requestCount("patch", "nodes")).as("one compare-and-delete").isEqualTo(1);
      assertThat(k8s.requestCount("get", "pods")).as("the lock owner's pod").isEqualTo(1);
      assertThat(k8s.requestCount("patch", "pods")).as("the allocation annotations").isEqualTo(1);
      assertThat(k8s.totalRequests()).isEqualTo(4);
    }
  }
}
