package dev.hamilock.device.nvidia;

import static dev.hamilock.device.nvidia.Nv.container;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistrationException;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Two vendors discovered through ServiceLoader on the class path work independently. */
class MultiVendorTest {
  static final VendorRegistry REG = VendorRegistry.discover();
  static final NodeView NODE =
      NodeView.of(
          "n",
          Map.of(
              NvidiaAnnotations.REGISTER,
              "[{\"id\":\"GPU-A\",\"count\":10,\"devmem\":16000,\"devcore\":100,\"type\":\"NVIDIA-T4\",\"health\":true},"
                  + "{\"id\":\"GPU-B\",\"index\":1,\"count\":10,\"devmem\":16000,\"devcore\":100,\"type\":\"NVIDIA-T4\",\"health\":true}]",
              "hami.io/node-testxpu-register",
              "XPU-0,4,32000,100,Acme X1,0,true,0,hami-core:"));

  static PodView pod(ContainerView... cs) {
    return PodView.builder("ns", "multi").containers(List.of(cs)).build();
  }

  @Test
  void discoversBothThroughServiceLoader() {
    assertThat(REG.vendors()).extracting(DeviceVendor::commonWord).contains("NVIDIA", "TESTXPU");
    assertThat(REG.config("TESTXPU").resourceNames().count()).isEqualTo("test.example/xpu");
    assertThat(REG.config("NVIDIA").resourceNames().count()).isEqualTo("nvidia.com/gpu");
    assertThat(VendorRegistry.builder().discover().discover().build().vendors())
        .hasSameSizeAs(REG.vendors());
  }

  @Test
  void ownLockKeysAndResources() {
    ContainerView nv = container("a", Map.of("nvidia.com/gpu", "1"), Map.of());
    ContainerView xpu = container("b", Map.of("test.example/xpu", "1"), Map.of());
    assertThat(REG.lockKeys(pod(nv))).containsExactly(HamiAnnotations.MUTEX_LOCK);
    assertThat(REG.lockKeys(pod(xpu))).containsExactly(TestXpuVendor.LOCK);
    assertThat(REG.lockKeys(pod(nv, xpu)))
        .containsExactly(HamiAnnotations.MUTEX_LOCK, TestXpuVendor.LOCK);
  }

  @Test
  void fitsEachVendorOnItsOwnDevicesAndReconstructsIndependently() throws Exception {
    UsageReconstructor u = new UsageReconstructor(REG);
    NodeUsage usage = u.nodeUsage(NODE, List.of());
    assertThat(usage.devices()).hasSize(3);
    PodView p =
        pod(
            container("a", Map.of("nvidia.com/gpu", "2", "nvidia.com/gpumem", "1000"), Map.of()),
            container(
                "b", Map.of("test.example/xpu", "1", "test.example/xpu-mem", "5000"), Map.of()));
    NodeFit f = PodFitter.create(REG).fit(p, usage);
    assertThat(f.fits()).as(f.reason()).isTrue();
    assertThat(f.devices().forVendor("NVIDIA")).hasSize(2);
    assertThat(f.devices().forVendor("NVIDIA").get(1)).as("container b asked no NVIDIA").isEmpty();
    assertThat(f.devices().forVendor("NVIDIA").get(0))
        .extracting(ContainerDevice::uuid)
        .containsExactlyInAnyOrder("GPU-A", "GPU-B");
    assertThat(f.devices().forVendor("TESTXPU"))
        .containsExactly(
            List.of(), List.of(new ContainerDevice(0, "XPU-0", "TESTXPU", 5000, 0, 0)));
    Map<String, String> annos = new HashMap<>(REG.allocationAnnotations(f.devices()));
    assertThat(annos)
        .containsKeys(
            NvidiaAnnotations.TO_ALLOCATE,
            NvidiaAnnotations.ALLOCATED,
            "hami.io/testxpu-devices-to-allocate",
            "hami.io/testxpu-devices-allocated");
    assertThat(annos.get("hami.io/testxpu-devices-allocated")).isEqualTo(";XPU-0,TESTXPU,5000,0:;");
    annos.put(HamiAnnotations.VGPU_NODE, "n");
    PodView placed = p.toBuilder().annotations(annos).build();
    NodeUsage after = u.nodeUsage(NODE, List.of(placed));
    assertThat(after.devices())
        .extracting(d -> d.id() + "=" + d.usedmem())
        .containsExactlyInAnyOrder("GPU-A=1000", "GPU-B=1000", "XPU-0=5000");
    // a corrupt XPU allocation fails the node closed for every vendor
    annos.put("hami.io/testxpu-devices-allocated", "XPU-0");
    assertThat(u.nodeUsage(NODE, List.of(p.toBuilder().annotations(annos).build())).status())
        .isEqualTo(NodeUsage.Status.USAGE_UNKNOWN);
  }

  /** A second provider claiming CommonWord NVIDIA. */
  static final class ShadowNvidia extends TestXpuVendorShim {
    @Override
    public String commonWord() {
      return "NVIDIA";
    }
  }

  /** Delegating shim (NvidiaVendor is final). */
  static class TestXpuVendorShim implements DeviceVendor {
    private final TestXpuVendor d = new TestXpuVendor();

    @Override
    public String commonWord() {
      return d.commonWord();
    }

    @Override
    public dev.hamilock.device.spi.VendorConfig defaultConfig() {
      return dev.hamilock.device.spi.VendorConfig.of("shadow/gpu", null);
    }

    @Override
    public java.util.Optional<String> nodeLockKey() {
      return d.nodeLockKey();
    }

    @Override
    public String registrationAnnotationKey() {
      return d.registrationAnnotationKey();
    }

    @Override
    public String toAllocateAnnotationKey() {
      return d.toAllocateAnnotationKey();
    }

    @Override
    public String allocatedAnnotationKey() {
      return d.allocatedAnnotationKey();
    }

    @Override
    public java.util.Optional<dev.hamilock.device.spi.model.ContainerDeviceRequest> parseRequest(
        ContainerView c, dev.hamilock.device.spi.VendorConfig cfg) {
      return d.parseRequest(c, cfg);
    }

    @Override
    public List<dev.hamilock.device.spi.model.DeviceInfo> decodeNodeDevices(NodeView n)
        throws dev.hamilock.device.spi.codec.DeviceAnnotationException {
      return d.decodeNodeDevices(n);
    }

    @Override
    public dev.hamilock.device.spi.ContainerFit fit(
        List<dev.hamilock.device.spi.model.DeviceUsage> ds,
        dev.hamilock.device.spi.model.ContainerDeviceRequest r,
        dev.hamilock.device.spi.FitContext c) {
      return d.fit(ds, r, c);
    }
  }

  @Test
  void duplicateCommonWordNamesBothProviderClasses() {
    assertThatThrownBy(
            () -> VendorRegistry.builder().discover().register(new ShadowNvidia()).build())
        .isInstanceOf(VendorRegistrationException.class)
        .hasMessageContaining("NVIDIA")
        .hasMessageContaining(NvidiaVendor.class.getName())
        .hasMessageContaining(ShadowNvidia.class.getName());
  }

  @Test
  void overlappingResourceNameNamesBothProviderClasses() {
    var cfg = dev.hamilock.device.spi.VendorConfig.of("test.example/xpu", "nvidia.com/gpumem");
    assertThatThrownBy(() -> VendorRegistry.builder().discover().configure("TESTXPU", cfg).build())
        .isInstanceOf(VendorRegistrationException.class)
        .hasMessageContaining("nvidia.com/gpumem")
        .hasMessageContaining(NvidiaVendor.class.getName())
        .hasMessageContaining(TestXpuVendor.class.getName());
  }
}
