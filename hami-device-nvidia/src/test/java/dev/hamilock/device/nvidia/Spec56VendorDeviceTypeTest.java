package dev.hamilock.device.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Spec §5.6 (HAMi {@code getNodeResources}): a vendor's request only uses devices whose type
 * contains its type word, case-insensitively, whatever registration key carried them. An
 * Ascend-style list stored under {@code hami.io/node-nvidia-register} must not serve {@code
 * nvidia.com/gpu}.
 */
class Spec56VendorDeviceTypeTest {
  static final VendorRegistry REG = VendorRegistry.builder().register(new NvidiaVendor()).build();
  static final PodFitter FITTER = PodFitter.create(REG);

  static String dev(String id, int index, String type) {
    return "{\"id\":\""
        + id
        + "\",\"index\":"
        + index
        + ",\"count\":10,\"devmem\":65536,\"devcore\":100,\"type\":\""
        + type
        + "\",\"health\":true}";
  }

  static NodeUsage node(String name, String... devices) {
    NodeView n =
        NodeView.of(
            name, Map.of(NvidiaAnnotations.REGISTER, "[" + String.join(",", devices) + "]"));
    return new UsageReconstructor(REG).registeredDevices(n);
  }

  FilterResult fit(int gpus, NodeUsage... nodes) throws Exception {
    return FITTER.filter(
        FilterTest.pod(
            Map.of(),
            List.of(),
            List.of(
                Nv.container(
                    "c",
                    Map.of("nvidia.com/gpu", "" + gpus, "nvidia.com/gpumem", "3000"),
                    Map.of()))),
        List.of(nodes));
  }

  @Test
  void ascendDevicesUnderTheNvidiaKeyNeverServeAnNvidiaRequest() throws Exception {
    NodeUsage ascend =
        node("ascend", dev("Ascend-0", 0, "Ascend910B"), dev("Ascend-1", 1, "Ascend910B"));
    assertThat(ascend.status())
        .isEqualTo(NodeUsage.Status.READY); // registered, tagged NVIDIA by the key

    FilterResult r = fit(1, ascend);

    assertThat(r.best()).isEmpty();
    assertThat(r.failedNodes()).containsEntry("ascend", "NodeInsufficientDevice");
  }

  @Test
  void onAMixedListOnlyTheNvidiaTypedDevicesCount() throws Exception {
    NodeUsage mixed =
        node(
            "mixed",
            dev("Ascend-0", 0, "Ascend910B"),
            dev("GPU-1", 1, "NVIDIA-Tesla T4"),
            dev("Ascend-2", 2, "Ascend910B"));

    FilterResult one = fit(1, mixed);
    assertThat(one.best().orElseThrow().devices().forVendor("NVIDIA"))
        .singleElement()
        .satisfies(c -> assertThat(c).extracting(ContainerDevice::uuid).containsExactly("GPU-1"));
    FilterResult two = fit(2, mixed);
    assertThat(two.failedNodes()).containsEntry("mixed", "NodeInsufficientDevice");
  }

  @Test
  void theTypeWordIsMatchedCaseInsensitivelyAsHami() throws Exception {
    NodeUsage lower =
        node("lower", dev("GPU-0", 0, "nvidia a100-sxm4-40gb"), dev("GPU-1", 1, "Tesla-V100"));
    FilterResult r = fit(1, lower);
    assertThat(r.best().orElseThrow().devices().forVendor("NVIDIA").get(0))
        .extracting(ContainerDevice::uuid)
        .containsExactly("GPU-0");
    NvidiaVendor v = new NvidiaVendor();
    assertThat(v.ownsDeviceType("NVIDIA-Tesla P4")).isTrue();
    assertThat(v.ownsDeviceType("NVIDIA A100-SXM4-40GB")).isTrue();
    assertThat(v.ownsDeviceType("Ascend910B")).isFalse();
    assertThat(v.ownsDeviceType("")).isFalse();
  }

  @Test
  void everyVendorAppliesItsOwnPredicate() throws Exception {
    // the test XPU vendor overrides the predicate (its types are "Acme …" model names)
    VendorRegistry reg =
        VendorRegistry.builder().register(new NvidiaVendor()).register(new TestXpuVendor()).build();
    NodeView n =
        NodeView.of(
            "n",
            Map.of(
                "hami.io/node-testxpu-register",
                "XPU-0,4,32000,100,Acme X1,0,true,0,hami-core:XPU-1,4,32000,100,NVIDIA-Tesla T4,0,true,1,hami-core:"));
    NodeUsage u = new UsageReconstructor(reg).registeredDevices(n);
    FilterResult r =
        PodFitter.create(reg)
            .filter(
                FilterTest.pod(
                    Map.of(),
                    List.of(),
                    List.of(Nv.container("c", Map.of("test.example/xpu", "2"), Map.of()))),
                List.of(u));
    assertThat(r.failedNodes()).containsEntry("n", "NodeInsufficientDevice");
    FilterResult one =
        PodFitter.create(reg)
            .filter(
                FilterTest.pod(
                    Map.of(),
                    List.of(),
                    List.of(Nv.container("c", Map.of("test.example/xpu", "1"), Map.of()))),
                List.of(u));
    assertThat(one.best().orElseThrow().devices().forVendor("TESTXPU").get(0))
        .extracting(ContainerDevice::uuid)
        .containsExactly("XPU-0");
  }
}
