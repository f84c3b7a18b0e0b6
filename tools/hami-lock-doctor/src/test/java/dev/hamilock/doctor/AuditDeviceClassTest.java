package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.RealApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code audit}'s DeviceClass finding AU08 (issue 28 item 3, the mixed-cluster hazard) beside AU06,
 * on clusters serving {@code resource.k8s.io/v1}: the emulator and, tagged real-apiserver, the real
 * kube-apiserver v1.37 (seeded with the admin credentials; its output is the one quoted in the
 * doctor's README, written to {@code target/audit-dra-real.txt}).
 */
class AuditDeviceClassTest {
  private static final Instant NOW = Instant.parse("2026-12-02T07:00:00Z");

  /** A node advertising {@code nvidia.com/gpu} with the given capacity and allocatable. */
  private static void gpuNode(KubeBackend k8s, String name, String capacity, String allocatable) {
    Map<String, Object> meta = new LinkedHashMap<>();
    meta.put("name", name);
    meta.put(
        "annotations",
        Map.of(
            "hami.io/node-nvidia-register",
            AuditTest.T4,
            "hami.io/node-handshake",
            "Reported 2024-11-10 11:05:48.756620661 +0000 UTC"));
    k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Node",
            "metadata",
            meta,
            "status",
            Map.of(
                "capacity",
                Map.of("nvidia.com/gpu", capacity),
                "allocatable",
                Map.of("nvidia.com/gpu", allocatable))));
  }

  private static void deviceClass(KubeBackend k8s, String name, String extendedResource) {
    k8s.create(
        Map.of(
            "apiVersion",
            "resource.k8s.io/v1",
            "kind",
            "DeviceClass",
            "metadata",
            Map.of("name", name),
            "spec",
            Map.of("extendedResourceName", extendedResource)));
  }

  /**
   * Two DeviceClasses mapping nvidia.com/gpu (b-class first, so a-class is the newest or, within
   * the same second, the lower name: kube-scheduler's choice either way), one mapping another name;
   * node-a's device plugin serves it, node-b's is unhealthy (capacity 10, allocatable 0); a NVIDIA
   * DRA driver's ResourceSlice publishes node-a's registered card.
   */
  private static Fixtures.Run seedAndAudit(KubeBackend k8s) {
    gpuNode(k8s, "node-a", "10", "10");
    gpuNode(k8s, "node-b", "10", "0");
    deviceClass(k8s, "b-class", "nvidia.com/gpu");
    deviceClass(k8s, "a-class", "nvidia.com/gpu");
    deviceClass(k8s, "other", "example.com/fpga");
    k8s.create(
        Map.of(
            "apiVersion",
            "resource.k8s.io/v1",
            "kind",
            "ResourceSlice",
            "metadata",
            Map.of("name", "node-a-gpu.nvidia.com"),
            "spec",
            Map.of(
                "driver",
                "gpu.nvidia.com",
                "nodeName",
                "node-a",
                "pool",
                Map.of("name", "node-a", "generation", 1, "resourceSliceCount", 1),
                "devices",
                java.util.List.of(
                    Map.of(
                        "name",
                        "gpu-0",
                        "attributes",
                        Map.of("uuid", Map.of("string", AuditTest.T4_UUID)))))));
    return Fixtures.run(k8s, NOW, "audit");
  }

  private static void assertFindings(Fixtures.Run run) {
    assertThat(run.exit()).as("warnings only: %s%s", run.out(), run.err()).isZero();
    assertThat(run.out())
        .contains("WARNING   AU08 device-class-maps-hami-resource")
        .contains("DeviceClass a-class")
        .contains(
            "maps nvidia.com/gpu to DRA while node(s) node-a, node-b advertise it through the"
                + " device plugin")
        .contains("(now: node-b (capacity 10, allocatable 0))")
        .contains(
            "also mapped by DeviceClass(es) b-class, kube-scheduler uses only the newest, a-class")
        .contains("WARNING   AU06 card-in-hami-and-dra")
        .contains("WARNING   AU08 device-class-rejects-hami-pods")
        .contains(
            "rejects on every node each pod asking for nvidia.com/gpu together with"
                + " nvidia.com/gpumem or nvidia.com/gpumem-percentage or nvidia.com/gpucores or"
                + " nvidia.com/priority, which no node's allocatable lists")
        .doesNotContain("DeviceClass other");
  }

  @Test
  void aDeviceClassMappingNvidiaGpuWhileNodesAdvertiseItIsAWarningNamingTheNodesDraTakesOver() {
    try (ApiServerEmulator k8s = ApiServerEmulator.builder().servingDra(true).start()) {
      assertFindings(seedAndAudit(k8s));
    }
  }

  @Test
  void noDeviceClassMappingAHamiResourceNoWarning() {
    try (ApiServerEmulator k8s = ApiServerEmulator.builder().servingDra(true).start()) {
      gpuNode(k8s, "node-a", "10", "0");
      deviceClass(k8s, "other", "example.com/fpga");

      Fixtures.Run run = Fixtures.run(k8s, NOW, "audit");

      assertThat(run.out()).as(run.err()).doesNotContain("AU08");
      assertThat(run.exit()).as(run.out()).isZero();
    }
  }

  /**
   * dra4: the rejection needs a vendor resource that no node's allocatable lists and no DeviceClass
   * maps; here a node lists gpumem and gpucores and a class maps the other two: no rejection, the
   * mixed-cluster warning stays.
   */
  @Test
  void noRejectionWhenEveryOtherResourceIsListedOrMapped() {
    try (ApiServerEmulator k8s = ApiServerEmulator.builder().servingDra(true).start()) {
      Map<String, String> listed =
          Map.of(
              "nvidia.com/gpu", "10", "nvidia.com/gpumem", "245760", "nvidia.com/gpucores", "1000");
      k8s.create(
          Map.of(
              "apiVersion",
              "v1",
              "kind",
              "Node",
              "metadata",
              Map.of("name", "node-a"),
              "status",
              Map.of("capacity", listed, "allocatable", listed)));
      deviceClass(k8s, "gpu", "nvidia.com/gpu");
      deviceClass(k8s, "percentage", "nvidia.com/gpumem-percentage");
      deviceClass(k8s, "priority", "nvidia.com/priority");

      Fixtures.Run run = Fixtures.run(k8s, NOW, "audit");

      assertThat(run.out())
          .as(run.err())
          .contains("AU08 device-class-maps-hami-resource")
          .doesNotContain("device-class-rejects-hami-pods");
    }
  }

  @Test
  @Tag("real-apiserver")
  void onTheRealKubeApiserver() throws IOException {
    try (RealApiServer k8s = RealApiServer.start()) {
      Fixtures.Run run = seedAndAudit(k8s);
      Files.writeString(Path.of("target", "audit-dra-real.txt"), run.out());
      assertFindings(run);
    }
  }
}
