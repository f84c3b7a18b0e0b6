package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Spec §3.1–§3.3 and §8 V81 (HAMi util_test.go), plus the request cost of one hand-off. */
class HamiDevicePluginTest {

  private static final String KEY = HamiLockValue.NODE_LOCK_KEY;
  private static final String TO_ALLOCATE = HamiDevicePlugin.TO_ALLOCATE_ANNOTATION;
  private static final String GPU_A = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448";
  private static final String GPU_B = "GPU-00552014-5c87-89ac-b1a6-7b53aa24b0ec";

  private EmulatedCluster cluster;
  private HamiNodeLock lock;
  private HamiDevicePlugin plugin;

  @BeforeEach
  void start() throws Exception {
    cluster = EmulatedCluster.start();
    lock =
        HamiNodeLock.builder(cluster.newClient())
            .clock(Clock.fixed(Instant.parse("2026-08-01T06:00:00Z"), ZoneOffset.UTC))
            .build();
    plugin =
        new HamiDevicePlugin(
            cluster.newClient(), HamiNodeLock.builder(cluster.newClient()).build());
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  private static Map<String, String> bound(String node, String phase, String toAllocate) {
    return Map.of(
        HamiDevicePlugin.BIND_TIME_ANNOTATION,
        "1722492000",
        HamiDevicePlugin.BIND_PHASE_ANNOTATION,
        phase,
        HamiDevicePlugin.ASSIGNED_NODE_ANNOTATION,
        node,
        TO_ALLOCATE,
        toAllocate);
  }

  @Test
  void v81LockOwnerWinsOverPhaseAndFallbackListsPendingBoundPods() throws Exception {
    cluster.createNode("test-node-1", Map.of(KEY, "2026-08-01T06:00:00Z,default,allocated-pod"));
    cluster.createPod("default", "allocated-pod", "test-node-1", "Running", Map.of());
    assertThat(plugin.getPendingPod("test-node-1").getMetadata().getName())
        .isEqualTo("allocated-pod");

    cluster.createNode("test-node-0", Map.of());
    cluster.createPod(
        "default", "failed-pod", "test-node-0", "Failed", bound("test-node-0", "allocating", ""));
    cluster.createPod("default", "no-annotations", "test-node-0", "Pending", Map.of());
    cluster.createPod(
        "default",
        "no-bind-phase",
        "test-node-0",
        "Pending",
        Map.of(
            HamiDevicePlugin.BIND_TIME_ANNOTATION,
            "1",
            HamiDevicePlugin.ASSIGNED_NODE_ANNOTATION,
            "test-node-0"));
    cluster.createPod(
        "default", "empty-bind-phase", "test-node-0", "Pending", bound("test-node-0", "", ""));
    cluster.createPod(
        "default",
        "no-vgpu-node",
        "test-node-0",
        "Pending",
        Map.of(
            HamiDevicePlugin.BIND_TIME_ANNOTATION,
            "1",
            HamiDevicePlugin.BIND_PHASE_ANNOTATION,
            "allocating"));
    cluster.createPod(
        "default", "pending-pod", "test-node-0", "Pending", bound("test-node-0", "allocating", ""));
    assertThat(plugin.getPendingPod("test-node-0").getMetadata().getName())
        .isEqualTo("pending-pod");
  }

  @Test
  void v81EmptyOwnerFallsBackAndMissingThingsAreErrors() throws Exception {
    cluster.createNode("n1", Map.of(KEY, "2024-01-01T00:00:00Z,,"));
    assertThat(plugin.getAllocatePodByNode("n1")).isEmpty();
    assertThatThrownBy(() -> plugin.getPendingPod("n1"))
        .isInstanceOf(HamiException.class)
        .hasMessage("no binding pod found on node n1");
    assertThatThrownBy(() -> plugin.getPendingPod("absent")).isInstanceOf(ApiException.class);
    cluster.setNodeAnnotation("n1", KEY, "a,b");
    assertThatThrownBy(() -> plugin.getPendingPod("n1"))
        .hasMessage("malformed lock annotation: expected 3 parts, got 2 from a,b");
    cluster.setNodeAnnotation("n1", KEY, "2026-08-01T06:00:00Z,default,gone");
    assertThatThrownBy(() -> plugin.getPendingPod("n1"))
        .isInstanceOf(ApiException.class)
        .satisfies(e -> assertThat(((ApiException) e).getCode()).isEqualTo(404));
  }

  @Test
  void allocateHandsOutContainersInOrderAndCompletesAfterTheLast() throws Exception {
    String toAllocate =
        GPU_A + ",NVIDIA,3000,30:;" + GPU_B + ",NVIDIA,5000,50:" + GPU_A + ",NVIDIA,1000,10:;";
    cluster.createNode("n1", Map.of());
    cluster.createPod("default", "p", "n1", "Pending", bound("n1", "allocating", toAllocate));
    lock.lockNode("n1", "default", "p");

    AllocateResult first = plugin.allocate("n1", List.of(1));
    assertThat(first.success()).isTrue();
    assertThat(first.bindPhaseWritten()).isEmpty();
    assertThat(first.containerDevices())
        .containsExactly(List.of(new ContainerDevice(GPU_A, "NVIDIA", 3000, 30)));
    assertThat(cluster.podAnnotation("default", "p", TO_ALLOCATE))
        .contains(";" + GPU_B + ",NVIDIA,5000,50:" + GPU_A + ",NVIDIA,1000,10:;;");
    assertThat(cluster.nodeAnnotation("n1", KEY)).isPresent();

    AllocateResult second = plugin.allocate("n1", List.of(2));
    assertThat(second.success()).isTrue();
    assertThat(second.bindPhaseWritten()).contains("success");
    assertThat(second.containerDevices())
        .containsExactly(
            List.of(
                new ContainerDevice(GPU_B, "NVIDIA", 5000, 50),
                new ContainerDevice(GPU_A, "NVIDIA", 1000, 10)));
    assertThat(cluster.podAnnotation("default", "p", TO_ALLOCATE)).contains(";;;;");
    assertThat(cluster.podAnnotation("default", "p", HamiDevicePlugin.BIND_PHASE_ANNOTATION))
        .contains("success");
    assertThat(cluster.nodeAnnotation("n1", KEY)).isEmpty();
  }

  @Test
  void deviceCountMismatchFailsTheBindAndReleasesTheLock() throws Exception {
    cluster.createNode("n1", Map.of());
    cluster.createPod(
        "default", "p", "n1", "Pending", bound("n1", "allocating", GPU_A + ",NVIDIA,3000,30:;"));
    lock.lockNode("n1", "default", "p");

    AllocateResult result = plugin.allocate("n1", List.of(2));

    assertThat(result.success()).isFalse();
    assertThat(result.error())
        .get()
        .extracting(Throwable::getMessage)
        .isEqualTo("device number not matched");
    assertThat(result.bindPhaseWritten()).contains("failed");
    assertThat(cluster.podAnnotation("default", "p", HamiDevicePlugin.BIND_PHASE_ANNOTATION))
        .contains("failed");
    assertThat(cluster.podAnnotation("default", "p", TO_ALLOCATE))
        .contains(GPU_A + ",NVIDIA,3000,30:;");
    assertThat(cluster.nodeAnnotation("n1", KEY)).isEmpty();
  }

  @Test
  void malformedToAllocateFailsAndNoPodMeansNoCompletion() throws Exception {
    cluster.createNode("n1", Map.of());
    cluster.createPod(
        "default", "p", "n1", "Pending", bound("n1", "allocating", "uuid,type,100:;"));
    lock.lockNode("n1", "default", "p");
    AllocateResult bad = plugin.allocate("n1", List.of(1));
    assertThat(bad.error())
        .get()
        .extracting(Throwable::getMessage)
        .isEqualTo("pod annotation format error, missing fields, do not use nodeName in task spec");
    assertThat(bad.bindPhaseWritten()).contains("failed");
    assertThat(cluster.nodeAnnotation("n1", KEY)).isEmpty();

    cluster.createNode("empty", Map.of());
    AllocateResult none = plugin.allocate("empty", List.of(1));
    assertThat(none.pod()).isEmpty();
    assertThat(none.bindPhaseWritten()).isEmpty();
    assertThat(none.error())
        .get()
        .extracting(Throwable::getMessage)
        .isEqualTo("no binding pod found on node empty");
  }

  @Test
  void requestCostOfOneUncontendedAcquireReleaseAndOfOneHandOff() throws Exception {
    cluster.createNode("n1", Map.of());
    cluster.createPod(
        "default", "p", "n1", "Pending", bound("n1", "allocating", GPU_A + ",NVIDIA,3000,30:;"));

    cluster.resetCounters();
    lock.lockNode("n1", "default", "p");
    long acquireGets = cluster.requests("get", "nodes");
    long acquirePatches = cluster.requests("patch", "nodes");
    long acquireTotal = cluster.totalRequests();
    cluster.resetCounters();
    lock.releaseNodeLock("n1", "default", "p", false);
    long releaseTotal = cluster.totalRequests();

    assertThat(acquireGets).isEqualTo(3);
    assertThat(acquirePatches).isEqualTo(1);
    assertThat(acquireTotal).isEqualTo(4);
    assertThat(releaseTotal).isEqualTo(3);
    assertThat(acquireTotal + releaseTotal).as("HAMi: about 7 requests").isEqualTo(7);

    lock.lockNode("n1", "default", "p");
    cluster.resetCounters();
    AllocateResult result = plugin.allocate("n1", List.of(1));
    assertThat(result.bindPhaseWritten()).contains("success");
    // GET node + GET pod (lock owner), PATCH to-allocate, GET pod (completion check),
    // PATCH bind-phase, then the release: GET node, GET node, PATCH node.
    assertThat(cluster.requests("get", "nodes")).isEqualTo(3);
    assertThat(cluster.requests("get", "pods")).isEqualTo(2);
    assertThat(cluster.requests("patch", "pods")).isEqualTo(2);
    assertThat(cluster.requests("patch", "nodes")).isEqualTo(1);
    assertThat(cluster.totalRequests()).isEqualTo(8);
  }

  @Test
  void ownerLookupIgnoresPhaseAndNode() throws Exception {
    cluster.createNode("n1", Map.of(KEY, "2026-08-01T06:00:00Z,default,elsewhere"));
    cluster.createPod("default", "elsewhere", "other-node", "Succeeded", Map.of());
    V1Pod chosen = plugin.getPendingPod("n1");
    assertThat(chosen.getSpec().getNodeName()).isEqualTo("other-node");
  }
}
