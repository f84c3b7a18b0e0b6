package dev.hamilock.device.nvidia;

import static dev.hamilock.device.nvidia.Nv.container;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.FilterResult;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Filter end-to-end V74-V75, V41-V42 through the vendor, fail-closed usage, §7.25 alignment. */
class FilterTest {
  static final VendorRegistry REG = VendorRegistry.builder().register(new NvidiaVendor()).build();
  static final PodFitter FITTER = PodFitter.create(REG);

  static DeviceUsage card(String id, int index, int usedmem, int usedcores) {
    return new DeviceUsage(
        id,
        index,
        "NVIDIA",
        "NVIDIA",
        0,
        "hami-core",
        true,
        10,
        usedmem > 0 ? 1 : 0,
        8000,
        usedmem,
        100,
        usedcores,
        List.of(),
        false);
  }

  static List<NodeUsage> cluster() {
    return List.of(
        NodeUsage.of(
            NodeView.of("node1", Map.of()),
            List.of(card("device1", 0, 2000, 25), card("device2", 1, 0, 0))),
        NodeUsage.of(
            NodeView.of("node2", Map.of()),
            List.of(card("device3", 0, 0, 0), card("device4", 1, 6000, 75))));
  }

  static PodView pod(
      Map<String, String> annotations, List<ContainerView> init, List<ContainerView> app) {
    return PodView.builder("default", "p")
        .annotations(annotations)
        .initContainers(init)
        .containers(app)
        .build();
  }

  static ContainerView gpu(String name, int mem, int cores) {
    return container(
        name,
        Map.of(
            "nvidia.com/gpu",
            "1",
            "nvidia.com/gpumem",
            "" + mem,
            "nvidia.com/gpucores",
            "" + cores),
        Map.of());
  }

  static String chosen(FilterResult r) {
    return r.best().orElseThrow().devices().forVendor("NVIDIA").stream()
        .flatMap(List::stream)
        .map(ContainerDevice::uuid)
        .findFirst()
        .orElseThrow();
  }

  FilterResult run(String nodePolicy, String gpuPolicy) throws Exception {
    return FITTER.filter(
        pod(
            Map.of(
                HamiAnnotations.NODE_SCHEDULER_POLICY,
                nodePolicy,
                HamiAnnotations.GPU_SCHEDULER_POLICY,
                gpuPolicy),
            List.of(),
            List.of(gpu("c", 1000, 20))),
        cluster());
  }

  @Test
  void v74_policies() throws Exception {
    assertThat(cluster().get(0).baseScore()).isCloseTo(3.0, within(1e-9));
    assertThat(cluster().get(1).baseScore()).isCloseTo(8.0, within(1e-9));
    FilterResult bb = run("binpack", "binpack");
    assertThat(bb.bestNode()).contains("node2");
    assertThat(chosen(bb)).isEqualTo("device4");
    FilterResult bs = run("binpack", "spread");
    assertThat(bs.bestNode()).contains("node2");
    assertThat(chosen(bs)).isEqualTo("device3");
    FilterResult sb = run("spread", "binpack");
    assertThat(sb.bestNode()).contains("node1");
    assertThat(chosen(sb)).isEqualTo("device1");
    FilterResult ss = run("spread", "spread");
    assertThat(chosen(ss)).isEqualTo("device2");
    assertThat(ss.passed()).containsExactly("node1", "node2");
    assertThat(ss.failedNodes()).isEmpty();
  }

  @Test
  void v75_initContainerPeak() throws Exception {
    FilterResult r =
        FITTER.filter(
            pod(
                Map.of(HamiAnnotations.GPU_SCHEDULER_POLICY, "binpack"),
                List.of(gpu("init", 5000, 20)),
                List.of(gpu("app", 4000, 20))),
            cluster());
    assertThat(r.bestNode()).contains("node2");
    List<List<ContainerDevice>> nv = r.best().orElseThrow().devices().forVendor("NVIDIA");
    assertThat(nv).hasSize(2);
    assertThat(nv.get(1)).extracting(ContainerDevice::uuid).containsExactly("device3");
  }

  @Test
  void noDeviceRequestPassesAllNodes() throws Exception {
    FilterResult r =
        FITTER.filter(
            pod(Map.of(), List.of(), List.of(container("c", Map.of("cpu", "1"), Map.of()))),
            cluster());
    assertThat(r.devicesRequested()).isFalse();
    assertThat(r.passed()).containsExactly("node1", "node2");
    assertThat(r.best()).isEmpty();
  }

  @Test
  void failuresPerNodeAndAlignment_7_25() throws Exception {
    ContainerView cpu = container("sidecar", Map.of("cpu", "1"), Map.of());
    PodView p =
        pod(
            Map.of(NvidiaAnnotations.NOUSE_GPUUUID, "device3"),
            List.of(),
            List.of(cpu, gpu("main", 7000, 10), cpu));
    FilterResult r = FITTER.filter(p, cluster());
    assertThat(r.bestNode()).contains("node1");
    assertThat(r.failedNodes())
        .containsExactly(Map.entry("node2", "1/2 CardInsufficientMemory, 1/2 CardUuidMismatch"));
    NodeFit best = r.best().orElseThrow();
    assertThat(REG.allocationAnnotations(best.devices()))
        .containsEntry("hami.io/vgpu-devices-to-allocate", ";device2,NVIDIA,7000,10:;;")
        .containsEntry("hami.io/vgpu-devices-allocated", ";device2,NVIDIA,7000,10:;;");
    PodView two =
        pod(Map.of(), List.of(), List.of(container("c", Map.of("nvidia.com/gpu", "3"), Map.of())));
    assertThat(FITTER.filter(two, cluster()).failedNodes())
        .containsEntry("node1", "NodeInsufficientDevice");
  }

  @Test
  void badPodRequestIsTyped() {
    PodView p =
        pod(
            Map.of(),
            List.of(),
            List.of(
                container(
                    "c", Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "16Gi"), Map.of())));
    assertThatThrownBy(() -> FITTER.filter(p, cluster()))
        .isInstanceOf(InvalidPodRequestException.class)
        .hasMessageContaining("default/p")
        .hasMessageContaining("17179869184")
        .hasMessageContaining("nvidia.com/gpumem");
    PodView w =
        pod(
            Map.of(HamiAnnotations.DEVICE_SCORING_WEIGHTS, "core=high"),
            List.of(),
            List.of(gpu("c", 1, 1)));
    assertThatThrownBy(() -> FITTER.filter(w, cluster()))
        .isInstanceOf(InvalidPodRequestException.class)
        .hasMessageContaining("\"core\" weight must be an integer");
  }

  @Test
  void endToEndFromAnnotations_failClosed_and_v41() throws Exception {
    NvidiaVendor v = new NvidiaVendor();
    String reg =
        "[{\"id\":\"GPU-0\",\"count\":5,\"devmem\":8192,\"devcore\":100,\"type\":\"NVIDIA-Tesla P4\",\"numa\":0,\"health\":true,\"index\":0}]";
    NodeView n = NodeView.of("n", Map.of(NvidiaAnnotations.REGISTER, reg));
    List<DeviceInfo> ds = v.decodeNodeDevices(n);
    assertThat(ds).singleElement().satisfies(d -> assertThat(d.vendor()).isEqualTo("NVIDIA"));
    assertThatThrownBy(
            () -> v.decodeNodeDevices(NodeView.of("n", Map.of(NvidiaAnnotations.REGISTER, "[]"))))
        .hasMessage("no gpu found on node");
    assertThatThrownBy(() -> v.decodeNodeDevices(NodeView.of("n", Map.of())))
        .hasMessage("annos not found hami.io/node-nvidia-register");
    assertThatThrownBy(
            () ->
                v.decodeNodeDevices(
                    NodeView.of("n", Map.of(NvidiaAnnotations.REGISTER, "not-valid-json"))))
        .isInstanceOf(dev.hamilock.device.spi.codec.DeviceAnnotationException.class);
    assertThatThrownBy(
            () ->
                v.decodeNodeDevices(
                    NodeView.of(
                        "n",
                        Map.of(
                            NvidiaAnnotations.REGISTER,
                            reg,
                            NvidiaAnnotations.PAIR_SCORE,
                            "not-valid-json"))))
        .isInstanceOf(dev.hamilock.device.spi.codec.DeviceAnnotationException.class);

    UsageReconstructor u = new UsageReconstructor(REG);
    Map<String, String> a = new HashMap<>();
    a.put(HamiAnnotations.VGPU_NODE, "n");
    a.put(NvidiaAnnotations.ALLOCATED, "GPU-123,NVIDIA,4096,50:CORRUPTED");
    PodView corrupt = PodView.builder("ns", "corrupt").annotations(a).build();
    NodeUsage usage = u.nodeUsage(n, List.of(corrupt));
    NodeFit f = FITTER.fit(pod(Map.of(), List.of(), List.of(gpu("c", 100, 0))), usage);
    assertThat(f.fits()).isFalse();
    assertThat(f.reason()).contains("ns/corrupt").contains("CORRUPTED");
    NodeFit ok =
        FITTER.fit(pod(Map.of(), List.of(), List.of(gpu("c", 100, 0))), u.nodeUsage(n, List.of()));
    assertThat(ok.fits()).isTrue();
  }

  /**
   * Issue 23: a registration that lists one card twice (a device plugin bug or a hand edit; the T4
   * of {@code ../shared/fixtures/real-values.md} F-01 written twice) is bad input. Usage counted
   * the card on its first row only ({@code NodeUsage} indexes a UUID once) while the fit walked
   * both rows, so a two-card container got the one card twice. The registration is rejected naming
   * the UUID, as any undecodable one: the node is never fitted.
   */
  @Test
  void issue23ARegistrationListingOneCardTwiceIsRejectedNamingTheCard() throws Exception {
    String t4 = "GPU-9a3603f4-f66e-d48b-11ea-13e327064cca";
    String entry = t4 + ",10,15360,100,NVIDIA-Tesla T4,0,true:";
    NodeView node = NodeView.of("t4", Map.of(NvidiaAnnotations.REGISTER, entry + entry));
    PodView pod =
        PodView.builder("ns", "two-cards")
            .uid("u")
            .containers(
                List.of(
                    container(
                        "app",
                        Map.of("nvidia.com/gpu", "2", "nvidia.com/gpumem", "7000"),
                        Map.of())))
            .build();
    NodeUsage usage = new UsageReconstructor(REG).nodeUsage(node, List.of());

    FilterResult r = FITTER.filter(pod, List.of(usage));

    assertThat(r.best()).as("a node registering %s twice is not fitted", t4).isEmpty();
    assertThat(usage.status()).isEqualTo(NodeUsage.Status.UNREGISTERED);
    assertThat(usage.registrationErrors())
        .containsEntry("NVIDIA", "card " + t4 + " registered twice");
    assertThat(usage.unavailableReason()).get().asString().contains(t4);
  }
}
