package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1ResourceRequirements;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Spec §5.3, §5.6 and §8 V26 (HAMi nvidia/device_test.go). */
class NvidiaVendorLockTest {

  private EmulatedCluster cluster;

  @BeforeEach
  void start() throws Exception {
    cluster = EmulatedCluster.start();
  }

  @AfterEach
  void stop() {
    cluster.close();
  }

  static V1Pod pod(
      String ns, String name, Map<String, String> limits, Map<String, String> requests) {
    V1ResourceRequirements resources = new V1ResourceRequirements();
    limits.forEach((k, v) -> resources.putLimitsItem(k, Quantity.fromString(v)));
    requests.forEach((k, v) -> resources.putRequestsItem(k, Quantity.fromString(v)));
    return new V1Pod()
        .metadata(new V1ObjectMeta().namespace(ns).name(name))
        .spec(
            new V1PodSpec()
                .addContainersItem(
                    new V1Container().name("c").image("busybox").resources(resources)));
  }

  @Test
  void v26LocksOnlyForPodsWithAGpuContainer() throws Exception {
    cluster.createNode("n1", Map.of());
    NvidiaVendorLock nvidia =
        new NvidiaVendorLock(HamiNodeLock.builder(cluster.newClient()).build());

    nvidia.lockNode("n1", pod("default", "cpu-only", Map.of("cpu", "1"), Map.of()));
    assertThat(cluster.nodeAnnotation("n1", HamiLockValue.NODE_LOCK_KEY)).isEmpty();

    nvidia.lockNode("n1", pod("default", "pod-gpu", Map.of("nvidia.com/gpu", "1"), Map.of()));
    assertThat(cluster.nodeAnnotation("n1", HamiLockValue.NODE_LOCK_KEY).orElseThrow())
        .endsWith(",default,pod-gpu");
  }

  @Test
  void v26ReleasesOnlyForTheOwningGpuPod() throws Exception {
    cluster.createNode("n1", Map.of(HamiLockValue.NODE_LOCK_KEY, "lock-values,default,pod-gpu"));
    NvidiaVendorLock nvidia =
        new NvidiaVendorLock(HamiNodeLock.builder(cluster.newClient()).build());

    nvidia.releaseNodeLock("n1", pod("default", "pod-gpu", Map.of(), Map.of()));
    assertThat(cluster.nodeAnnotation("n1", HamiLockValue.NODE_LOCK_KEY))
        .contains("lock-values,default,pod-gpu");

    nvidia.releaseNodeLock(
        "n1", pod("default", "pod-gpu", Map.of("nvidia.com/gpu", "1"), Map.of()));
    assertThat(cluster.nodeAnnotation("n1", HamiLockValue.NODE_LOCK_KEY)).isEmpty();
  }

  @Test
  void requestRuleFollowsGenerateResourceRequests() {
    NvidiaVendorLock nvidia =
        new NvidiaVendorLock(HamiNodeLock.builder(cluster.newClient()).build());
    assertThat(nvidia.requestsDevices(pod("d", "p", Map.of(), Map.of("nvidia.com/gpu", "1"))))
        .isTrue();
    assertThat(
            nvidia.requestsDevices(
                pod(
                    "d",
                    "p",
                    Map.of("nvidia.com/gpu", "2", "nvidia.com/gpumem", "4096"),
                    Map.of())))
        .isTrue();
    assertThat(
            nvidia.requestsDevices(
                pod(
                    "d",
                    "p",
                    Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "16Gi"),
                    Map.of())))
        .as("memory beyond int32 drops the whole request")
        .isFalse();
    assertThat(
            nvidia.requestsDevices(
                pod("d", "p", Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "8Ki"), Map.of())))
        .as("8Ki = 8192 is an exact integer")
        .isTrue();
    assertThat(nvidia.requestsDevices(pod("d", "p", Map.of("nvidia.com/gpu", "0"), Map.of())))
        .isFalse();
    assertThat(nvidia.requestsDevices(pod("d", "p", Map.of("nvidia.com/gpu", "500m"), Map.of())))
        .isFalse();
    assertThat(
            new NvidiaVendorLock(
                    HamiNodeLock.builder(cluster.newClient()).build(),
                    "nvidia.com/gpu",
                    "nvidia.com/gpumem",
                    2)
                .requestsDevices(
                    pod(
                        "d",
                        "p",
                        Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "1Gi"),
                        Map.of())))
        .as("1Gi exceeds 2147483647 / 2")
        .isFalse();
    V1Pod initOnly = pod("d", "p", Map.of(), Map.of());
    initOnly
        .getSpec()
        .addInitContainersItem(
            new V1Container()
                .name("i")
                .resources(
                    new V1ResourceRequirements()
                        .putLimitsItem("nvidia.com/gpu", Quantity.fromString("1"))));
    assertThat(nvidia.requestsDevices(initOnly)).as("init containers never lock").isFalse();
    assertThat(nvidia.requestsDevices(null)).isFalse();
  }
}
