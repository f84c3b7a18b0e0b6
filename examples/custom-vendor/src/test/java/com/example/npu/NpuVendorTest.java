package com.example.npu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.InvalidResourceRequestException;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The third-party vendor next to NVIDIA, found and used by the library without any change to it.
 */
class NpuVendorTest {
  private final VendorRegistry registry = VendorRegistry.discover();
  private final UsageReconstructor usage = new UsageReconstructor(registry);

  @Test
  void discoveredByTheRegistryNextToNvidia() {
    List<String> words = registry.vendors().stream().map(DeviceVendor::commonWord).toList();
    assertThat(words).contains("NPU", "NVIDIA");
    DeviceVendor npu = registry.vendor("NPU").orElseThrow(); // guarded (hami-device-spi README)
    assertThat(registry.providers()).anyMatch(NpuVendor.class::isInstance);
    assertThat(npu.nodeLockKey()).contains("example.com/npu.lock");
    assertThat(registry.config("NPU").resourceNames().all())
        .containsExactly("example.com/npu", "example.com/npu-memory");
  }

  @Test
  void podNeedingBothVendorsGetsBothLockKeysSorted() throws Exception {
    assertThat(registry.lockKeys(Npu.pod("both", 1, 8192, 1, 3000)))
        .containsExactly("example.com/npu.lock", "hami.io/mutex.lock");
    assertThat(registry.lockKeys(Npu.pod("npu-only", 1, 8192, 0, 0)))
        .containsExactly("example.com/npu.lock");
    assertThat(registry.lockKeys(Npu.pod("gpu-only", 0, 0, 1, 3000)))
        .containsExactly("hami.io/mutex.lock");
  }

  @Test
  void podNeedingBothFitsOnlyOnTheNodeRegisteringBoth() throws Exception {
    PodView pod = Npu.pod("both", 1, 8192, 1, 3000);
    List<NodeUsage> nodes =
        List.of(
            usage.nodeUsage(Npu.node("gpu-only", false, true), List.of()),
            usage.nodeUsage(Npu.node("npu-only", true, false), List.of()),
            usage.nodeUsage(Npu.node("both", true, true), List.of()));
    FilterResult r = PodFitter.create(registry).filter(pod, nodes);
    assertThat(r.bestNode()).contains("both");
    assertThat(r.failedNodes()).containsOnlyKeys("gpu-only", "npu-only");
    PodDevices d = r.best().orElseThrow().devices();
    assertThat(d.byVendor()).containsOnlyKeys("NPU", "NVIDIA");
    ContainerDevice npu = d.forVendor("NPU").get(0).get(0);
    assertThat(npu.uuid()).startsWith("NPU-");
    assertThat(npu.usedmem()).isEqualTo(8192);
    assertThat(d.forVendor("NVIDIA").get(0).get(0).usedmem()).isEqualTo(3000);
  }

  @Test
  void allocationAnnotationsRoundTripAndCountAsUsage() throws Exception {
    PodView pod = Npu.pod("both", 2, 16384, 1, 3000);
    NodeView node = Npu.node("both", true, true);
    NodeFit fit = PodFitter.create(registry).fit(pod, usage.nodeUsage(node, List.of()));
    assertThat(fit.fits()).as(fit.reason()).isTrue();
    Map<String, String> annotations = registry.allocationAnnotations(fit.devices());
    assertThat(annotations)
        .containsKeys(
            "example.com/npu-devices-to-allocate",
            "example.com/npu-devices-allocated",
            "hami.io/vgpu-devices-allocated");
    assertThat(annotations.get("example.com/npu-devices-allocated"))
        .matches("(NPU-[01],NPU,16384,0:){2};");
    assertThat(annotations.get("example.com/npu-devices-to-allocate"))
        .isEqualTo(annotations.get("example.com/npu-devices-allocated"));

    PodView allocated = pod.toBuilder().annotations(annotations).build();
    List<List<ContainerDevice>> back =
        registry.vendor("NPU").orElseThrow().decodeAllocated(allocated).orElseThrow();
    assertThat(back.get(0).stream().map(ContainerDevice::uuid).collect(Collectors.toSet()))
        .isEqualTo(
            fit.devices().forVendor("NPU").get(0).stream()
                .map(ContainerDevice::uuid)
                .collect(Collectors.toSet()));
    assertThat(back.get(0))
        .allSatisfy(
            c -> {
              assertThat(c.type()).isEqualTo("NPU");
              assertThat(c.usedmem()).isEqualTo(16384);
            });

    // the allocation now counts: two more 16384 MiB pairs fit on 2 x 32768 MiB, a third does not
    PodView placed =
        allocated.toBuilder()
            .annotations(merge(annotations, Map.of("hami.io/vgpu-node", "both")))
            .build();
    PodView second = Npu.pod("second", 2, 16384, 0, 0);
    NodeUsage afterOne = usage.nodeUsage(node, List.of(placed));
    NodeFit f2 = PodFitter.create(registry).fit(second, afterOne);
    assertThat(f2.fits()).isTrue();
    PodView secondPlaced =
        second.toBuilder()
            .annotations(
                merge(
                    registry.allocationAnnotations(f2.devices()),
                    Map.of("hami.io/vgpu-node", "both")))
            .build();
    NodeFit f3 =
        PodFitter.create(registry)
            .fit(
                Npu.pod("third", 1, 16384, 0, 0),
                usage.nodeUsage(node, List.of(placed, secondPlaced)));
    assertThat(f3.fits()).isFalse();
    assertThat(f3.reason()).isEqualTo("2/2 CardInsufficientMemory");
  }

  private static Map<String, String> merge(Map<String, String> a, Map<String, String> b) {
    Map<String, String> m = new java.util.LinkedHashMap<>(a);
    m.putAll(b);
    return m;
  }

  @Test
  void requestsAreParsedStrictly() throws Exception {
    NpuVendor v = new NpuVendor();
    assertThat(
            v.parseRequest(
                ContainerView.ofQuantities("c", null, Map.of("example.com/npu", "2"), Map.of()),
                v.defaultConfig()))
        .contains(new ContainerDeviceRequest(2, "NPU", 0, 100, 0));
    assertThat(
            v.parseRequest(
                ContainerView.ofQuantities("c", null, Map.of("cpu", "2"), Map.of()),
                v.defaultConfig()))
        .isEmpty();
    assertThatThrownBy(
            () ->
                v.parseRequest(
                    ContainerView.ofQuantities(
                        "c",
                        null,
                        Map.of("example.com/npu", "1", "example.com/npu-memory", "8Gi"),
                        Map.of()),
                    v.defaultConfig()))
        .isInstanceOf(InvalidResourceRequestException.class)
        .hasMessageContaining("example.com/npu-memory");
    assertThatThrownBy(
            () ->
                v.parseRequest(
                    ContainerView.ofQuantities(
                        "c", null, Map.of("example.com/npu", "0.5"), Map.of()),
                    v.defaultConfig()))
        .isInstanceOf(InvalidResourceRequestException.class)
        .hasMessageContaining("0.5");
  }

  @Test
  void registrationErrorsAreTyped() {
    NpuVendor v = new NpuVendor();
    assertThatThrownBy(() -> v.decodeNodeDevices(NodeView.of("n", Map.of())))
        .isInstanceOf(DeviceAnnotationException.class)
        .hasMessageContaining("example.com/node-npu-register");
    assertThatThrownBy(
            () ->
                v.decodeNodeDevices(NodeView.of("n", Map.of(NpuVendor.REGISTER_ANNOTATION, "[]"))))
        .isInstanceOf(DeviceAnnotationException.class)
        .hasMessageContaining("no NPU found");
  }
}
