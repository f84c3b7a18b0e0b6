package dev.hamilock.device.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 fault 2 (HAMi#2563, volcano#5829, KAI-Scheduler PR#1556): native sidecars (init
 * containers with {@code restartPolicy: Always}) were fitted and counted as run-to-completion init
 * containers. On one Tesla T4 (15360 MiB, the registration of {@code
 * ../shared/fixtures/real-values.md}) the amounts must follow Kubernetes' {@code PodRequests} per
 * card: a sidecar counts from its start, beside every later init container and the whole app phase.
 */
class Hami2563NativeSidecarTest {
  static final String T4 = "GPU-9a3603f4-f66e-d48b-11ea-13e327064cca";
  static final VendorRegistry REG = VendorRegistry.builder().register(new NvidiaVendor()).build();
  static final PodFitter FITTER = PodFitter.create(REG);
  static final UsageReconstructor USAGE = new UsageReconstructor(REG);
  static final NodeView NODE =
      NodeView.of(
          "t4", Map.of(NvidiaAnnotations.REGISTER, T4 + ",10,15360,100,NVIDIA-Tesla T4,0,true:"));

  static ContainerView gpu(String name, int mib) {
    return Nv.container(
        name, Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "" + mib), Map.of());
  }

  static ContainerView sidecar(String name, int mib) {
    return gpu(name, mib).withRestartPolicy("Always");
  }

  static PodView pod(String name, List<ContainerView> init, List<ContainerView> app) {
    return PodView.builder("ns", name).uid(name).initContainers(init).containers(app).build();
  }

  /** The node with {@code pods} placed as the scheduler places them (each fitted, then Running). */
  static NodeUsage nodeWith(PodView... pods) throws Exception {
    List<PodView> placed = new java.util.ArrayList<>();
    for (PodView p : pods) {
      FilterResult r = FITTER.filter(p, List.of(USAGE.nodeUsage(NODE, placed)));
      assertThat(r.best()).as("setup pod %s fits", p.key()).isPresent();
      String alloc = PodDevicesCodec.encode(r.best().get().devices().forVendor("NVIDIA"));
      placed.add(
          p.toBuilder()
              .phase(PodView.Phase.RUNNING)
              .nodeName(NODE.name())
              .annotations(
                  Map.of(
                      HamiAnnotations.VGPU_NODE, NODE.name(), NvidiaAnnotations.ALLOCATED, alloc))
              .build());
    }
    return USAGE.nodeUsage(NODE, placed);
  }

  @Test
  void aSidecarAndAnAppOf8000MiBEachDoNotFitOneT4() throws Exception {
    PodView p = pod("p", List.of(sidecar("proxy", 8000)), List.of(gpu("app", 8000)));

    FilterResult r = FITTER.filter(p, List.of(nodeWith()));

    assertThat(r.best()).as("16000 MiB at once on a 15360 MiB card").isEmpty();
    assertThat(r.failedNodes()).containsKey("t4");
  }

  @Test
  void aRunningSidecarCountsBesideItsAppSoA6000MiBPodDoesNotFit() throws Exception {
    NodeUsage used =
        nodeWith(pod("running", List.of(sidecar("proxy", 8000)), List.of(gpu("app", 4000))));
    DeviceUsage card = used.devices().get(0);
    assertThat(List.of(card.usedmem(), card.used())).containsExactly(12000, 2);

    FilterResult r =
        FITTER.filter(pod("next", List.of(), List.of(gpu("app", 6000))), List.of(used));

    assertThat(r.best()).as("12000 + 6000 MiB on a 15360 MiB card").isEmpty();
  }

  @Test
  void aSidecarBeforeAnInitContainerRunsDuringIt() throws Exception {
    NodeUsage used = nodeWith(pod("other", List.of(), List.of(gpu("app", 4000))));

    FilterResult r =
        FITTER.filter(
            pod("p", List.of(sidecar("proxy", 4000), gpu("init", 8000)), List.of(gpu("app", 2000))),
            List.of(used));

    assertThat(r.best()).as("init phase: 4000 used + 4000 sidecar + 8000 init").isEmpty();
  }

  /**
   * Where this library differs from HAMi's design (sidecar sum + max(init, app) per card): a
   * sidecar declared after an init container starts after it ended, so Kubernetes (and this fit)
   * count the init phase as 4000 + 8000 and the app phase as 4000 + 4000 + 2000; HAMi's design
   * would charge 4000 + 4000 + 8000 = 16000 MiB and refuse the card.
   */
  @Test
  void aSidecarAfterAnInitContainerDoesNotRunDuringIt() throws Exception {
    NodeUsage used = nodeWith(pod("other", List.of(), List.of(gpu("app", 4000))));
    PodView p =
        pod("p", List.of(gpu("init", 8000), sidecar("proxy", 4000)), List.of(gpu("app", 2000)));

    FilterResult r = FITTER.filter(p, List.of(used));

    assertThat(r.best()).isPresent();
    List<List<ContainerDevice>> nv = r.best().get().devices().forVendor("NVIDIA");
    assertThat(nv).hasSize(3).allSatisfy(c -> assertThat(c).extracting("uuid").containsOnly(T4));
    assertThat(nodeWith(pod("other", List.of(), List.of(gpu("app", 4000))), p).devices().get(0))
        .extracting(DeviceUsage::usedmem, DeviceUsage::used)
        .as("peak of this pod: max(init 8000, sidecar 4000 + app 2000), two slots in the app phase")
        .containsExactly(4000 + 8000, 1 + 2);
  }
}
