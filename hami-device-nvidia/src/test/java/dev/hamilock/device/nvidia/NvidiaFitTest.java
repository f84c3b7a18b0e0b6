package dev.hamilock.device.nvidia;

import static dev.hamilock.device.nvidia.Nv.card;
import static dev.hamilock.device.nvidia.Nv.dev;
import static dev.hamilock.device.nvidia.Nv.fit;
import static dev.hamilock.device.nvidia.Nv.req;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Vectors V49-V68 and V70 (NVIDIA Fit, spec §5.7). */
class NvidiaFitTest {
  static List<String> ids(ContainerFit f) {
    return f.devices().stream().map(ContainerDevice::uuid).toList();
  }

  static DeviceUsage typed(String id, String type, String mode) {
    return new DeviceUsage(
        id, 0, "NVIDIA", type, 0, mode, true, 10, 0, 1000, 0, 100, 0, List.of(), false);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "|||abc|true", "abc,123|||abc|true", "abc,123|||1abc|false", "|abc,123||abc|false",
        "|abc,123||1abc|true", "abc,123|abc||abc|false", "abc,123|456||abc|true",
            "' abc , 123 '|||abc|true",
        "''|||abc|true", "'   '|||abc|true", "|''||abc|true",
      })
  void v49_uuidSelectors(String use, String nouse, String unused, String id, boolean ok) {
    Map<String, String> a = new java.util.HashMap<>();
    if (use != null) a.put(NvidiaAnnotations.USE_GPUUUID, use);
    if (nouse != null) a.put(NvidiaAnnotations.NOUSE_GPUUUID, nouse);
    assertThat(NvidiaSelectors.fromAnnotations("?", a).uuidMatches(id)).isEqualTo(ok);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "||NVIDIA-A100|true",
        "A100,V100||NVIDIA-A100|true",
        "V100||NVIDIA-A100|false",
        "|A100|NVIDIA-A100|false",
        "|V100|NVIDIA-A100|true",
        "''||NVIDIA-A100|true",
        "|'   '|NVIDIA-A100|true",
        "A100|A100|NVIDIA-A100|false",
        "|'V100,'|NVIDIA-A100|true",
        "|',V100'|NVIDIA-A100|true",
        "'V100,'||NVIDIA-A100|false",
        "A10||NVIDIA A100|true",
        "A10|A100|NVIDIA A100|false",
        "A10|A100|NVIDIA A10|true",
        "A100||NVIDIA-V100|false",
        "a100||NVIDIA-A100|true",
      })
  void v50_typeSelectors(String use, String nouse, String type, boolean ok) {
    Map<String, String> a = new java.util.HashMap<>();
    if (use != null) a.put(NvidiaAnnotations.USE_GPUTYPE, use);
    if (nouse != null) a.put(NvidiaAnnotations.NOUSE_GPUTYPE, nouse);
    assertThat(NvidiaSelectors.fromAnnotations("?", a).typeMatches(type, "hami-core"))
        .isEqualTo(ok);
  }

  @Test
  void v51_modeAndNumaBind() {
    assertThat(
            fit(
                    List.of(typed("d", "NVIDIA-T4", "hami-core")),
                    req(1, 10, 101, 0),
                    Map.of(NvidiaAnnotations.VGPU_MODE, "mps"),
                    Map.of(),
                    "spread")
                .reason())
        .isEqualTo("1/1 CardTypeMismatch");
    assertThat(
            fit(
                    List.of(typed("d", "NVIDIA-T4", "hami-core")),
                    req(1, 10, 101, 0),
                    Map.of(NvidiaAnnotations.VGPU_MODE, "hami-core"),
                    Map.of(),
                    "spread")
                .fits())
        .isTrue();
    assertThat(
            fit(
                    List.of(typed("d", "NVIDIA-T4", "")),
                    req(1, 10, 101, 0),
                    Map.of(NvidiaAnnotations.VGPU_MODE, "mps"),
                    Map.of(),
                    "spread")
                .fits())
        .as("§7.27 empty mode matches")
        .isTrue();
    assertThat(
            NvidiaSelectors.fromAnnotations("?", Map.of(PodFitter.NUMA_BIND_ANNOTATION, "true"))
                .numaBind())
        .isTrue();
    for (String v : List.of("false", "notabool")) {
      assertThat(
              NvidiaSelectors.fromAnnotations("?", Map.of(PodFitter.NUMA_BIND_ANNOTATION, v))
                  .numaBind())
          .isFalse();
    }
    assertThat(NvidiaSelectors.fromAnnotations("?", Map.of()).numaBind()).isFalse();
  }

  @Test
  void v52_walkFromEnd() {
    ContainerFit f =
        fit(List.of(card("dev-0", 0, 128), card("dev-1", 1, 128)), req(1, 64, 101, 50));
    assertThat(f.fits()).isTrue();
    assertThat(f.devices()).containsExactly(new ContainerDevice(1, "dev-1", "NVIDIA", 64, 50, 0));
  }

  @Test
  void v53_to_v57_reasons() {
    assertThat(fit(List.of(card("dev-0", 0, 128)), req(1, 512, 101, 0)).reason())
        .isEqualTo("1/1 CardInsufficientMemory");
    assertThat(
            fit(List.of(dev("dev-0", 0, 0, 100, 0, 1024, 0, 100, 100)), req(1, 512, 101, 50))
                .reason())
        .isEqualTo("1/1 CardInsufficientCore");
    assertThat(
            fit(
                    List.of(card("dev-0", 0, 1024)),
                    new dev.hamilock.device.spi.model.ContainerDeviceRequest(
                        1, "OtherType", 1, 101, 0))
                .reason())
        .isEqualTo("1/1 CardTypeMismatch");
    assertThat(
            fit(
                    List.of(card("dev-1", 1, 1024)),
                    req(2, 1, 101, 0),
                    Map.of(NvidiaAnnotations.USE_GPUUUID, "dev-0"),
                    Map.of(),
                    "spread")
                .reason())
        .isEqualTo("1/1 CardUuidMismatch");
    assertThat(
            fit(
                    List.of(card("dev-0", 0, 1024)),
                    req(2, 1, 101, 0),
                    Map.of(NvidiaAnnotations.NOUSE_GPUUUID, "dev-0"),
                    Map.of(),
                    "spread")
                .reason())
        .isEqualTo("1/1 CardUuidMismatch");
    assertThat(
            fit(List.of(dev("dev-0", 0, 0, 100, 100, 1024, 0, 100, 0)), req(1, 1, 101, 0)).reason())
        .isEqualTo("1/1 CardTimeSlicingExhausted");
  }

  @Test
  void v58_coresClampedAndWritten() {
    ContainerFit f = fit(List.of(card("dev-0", 0, 1024)), req(1, 1, 101, 120));
    assertThat(f.fits()).isTrue();
    assertThat(f.devices().get(0).usedcores()).isEqualTo(100);
  }

  @Test
  void v59_to_v61() {
    assertThat(
            fit(List.of(dev("dev-0", 0, 0, 100, 20, 1024, 0, 100, 0)), req(1, 1, 101, 100))
                .reason())
        .isEqualTo("1/1 ExclusiveDeviceAllocateConflict");
    assertThat(
            fit(List.of(dev("dev-0", 0, 0, 100, 20, 1024, 0, 100, 100)), req(1, 1, 101, 0))
                .reason())
        .isEqualTo("1/1 CardComputeUnitsExhausted");
    assertThat(
            fit(List.of(dev("dev-0", 0, 0, 100, 20, 1024, 0, 100, 10)), req(2, 1, 101, 0)).reason())
        .isEqualTo("1/1 AllocatedCardsInsufficientRequest");
    assertThat(
            fit(List.of(card("dev-0", 0, 1024), card("dev-1", 1, 1024)), req(3, 1, 101, 0))
                .reason())
        .isEqualTo("2/2 AllocatedCardsInsufficientRequest");
    // exclusivity only on totalcore 100 (§7.23)
    assertThat(
            fit(List.of(dev("dev-0", 0, 0, 100, 20, 1024, 0, 300, 0)), req(1, 1, 101, 100)).fits())
        .isTrue();
  }

  @Test
  void v62_percentageAndHealth() {
    ContainerFit f = fit(List.of(card("dev-0", 0, 1280)), req(1, 0, 10, 0));
    assertThat(f.devices()).extracting(ContainerDevice::usedmem).containsExactly(128);
    DeviceUsage sick =
        new DeviceUsage(
            "dev-0",
            0,
            "NVIDIA",
            "NVIDIA",
            0,
            "hami-core",
            false,
            100,
            0,
            1280,
            0,
            100,
            0,
            List.of(),
            false);
    assertThat(fit(List.of(sick), req(1, 0, 10, 0)).reason()).isEqualTo("1/1 CardNotHealth");
  }

  @Test
  void v63_cordon() {
    List<DeviceUsage> two = List.of(card("dev-0", 0, 1024), card("dev-1", 1, 1024));
    assertThat(
            ids(
                fit(
                    two,
                    req(1, 1, 101, 0),
                    Map.of(),
                    Map.of("hami.io/device-cordon", "dev-1, "),
                    "spread")))
        .containsExactly("dev-0");
    assertThat(
            fit(
                    two,
                    req(1, 1, 101, 0),
                    Map.of(),
                    Map.of("hami.io/device-cordon", "dev-0,dev-1"),
                    "spread")
                .reason())
        .isEqualTo("2/2 CardCordoned");
    List<DeviceUsage> busy =
        List.of(card("dev-0", 0, 1024), dev("dev-1", 1, 0, 100, 1, 1024, 100, 100, 10));
    assertThat(
            ids(
                fit(
                    busy,
                    req(1, 1, 101, 0),
                    Map.of(),
                    Map.of("hami.io/device-cordon", "dev-1"),
                    "spread")))
        .containsExactly("dev-0");
    assertThat(busy.get(1).usedmem()).isEqualTo(100);
    assertThat(fit(two, req(1, 1, 101, 0)).fits()).isTrue();
  }

  @Test
  void v64_numaBind() {
    List<DeviceUsage> d =
        List.of(
            dev("dev-0", 0, 1, 100, 0, 1024, 0, 100, 0),
            dev("dev-1", 1, 1, 100, 0, 1024, 0, 100, 0),
            dev("dev-2", 2, 0, 100, 0, 1024, 0, 100, 0));
    ContainerFit f =
        fit(
            d,
            req(2, 1, 101, 0),
            Map.of(PodFitter.NUMA_BIND_ANNOTATION, "true"),
            Map.of(),
            "spread");
    assertThat(ids(f)).containsExactly("dev-1", "dev-0");
    ContainerFit split =
        fit(
            List.of(d.get(0), d.get(2)),
            req(2, 1, 101, 0),
            Map.of(PodFitter.NUMA_BIND_ANNOTATION, "true"),
            Map.of(),
            "spread");
    assertThat(split.reason()).contains("NumaNotFit").contains("AllocatedCardsInsufficientRequest");
  }

  @Test
  void v65_mutex() {
    List<DeviceUsage> d =
        List.of(dev("used", 0, 0, 100, 1, 1024, 0, 100, 0), card("idle", 1, 1024));
    assertThat(ids(fit(d, req(1, 1, 101, 0), Map.of(), Map.of(), "mutex"))).containsExactly("idle");
    assertThat(fit(d, req(2, 1, 101, 0), Map.of(), Map.of(), "mutex").reason())
        .contains("1/2 ExclusiveDeviceAllocateConflict");
  }

  @Test
  void v66_topology() {
    List<DeviceUsage> d =
        List.of(card("dev-0", 0, 1024), card("dev-1", 1, 1024), card("dev-2", 2, 1024));
    assertThat(
            fit(d.subList(0, 2), req(2, 1, 101, 0), Map.of(), Map.of(), "topology-aware").devices())
        .hasSize(2);
    String s =
        "[{\"uuid\":\"dev-0\",\"score\":{\"dev-1\":100,\"dev-2\":200}},{\"uuid\":\"dev-1\",\"score\":{\"dev-0\":100,\"dev-2\":150}},"
            + "{\"uuid\":\"dev-2\",\"score\":{\"dev-0\":200,\"dev-1\":150}}]";
    Map<String, String> n = Map.of(NvidiaAnnotations.PAIR_SCORE, s);
    assertThat(ids(fit(d, req(1, 1, 101, 0), Map.of(), n, "topology-aware")))
        .containsExactly("dev-1");
    assertThat(ids(fit(d, req(2, 1, 101, 0), Map.of(), n, "topology-aware")))
        .containsExactlyInAnyOrder("dev-0", "dev-2");
    assertThat(fit(d, req(2, 1, 101, 0), Map.of(), Map.of(), "topology-aware").devices())
        .hasSize(2);
    String neg =
        "[{\"uuid\":\"dev-0\",\"score\":{\"dev-1\":-5,\"dev-2\":-3}},{\"uuid\":\"dev-1\",\"score\":{\"dev-0\":-5,\"dev-2\":-1}},"
            + "{\"uuid\":\"dev-2\",\"score\":{\"dev-0\":-3,\"dev-1\":-1}}]";
    Map<String, String> m = Map.of(NvidiaAnnotations.PAIR_SCORE, neg);
    assertThat(ids(fit(d, req(1, 1, 101, 0), Map.of(), m, "topology-aware")))
        .containsExactly("dev-0");
    assertThat(ids(fit(d, req(2, 1, 101, 0), Map.of(), m, "topology-aware")))
        .containsExactlyInAnyOrder("dev-1", "dev-2");
    assertThat(fit(d.subList(0, 1), req(2, 1, 101, 0), Map.of(), n, "topology-aware").fits())
        .isFalse();
  }

  @Test
  void v67_wholeCardPercentage() {
    ContainerFit f = fit(List.of(dev("d", 0, 0, 10, 0, 11264, 0, 100, 0)), req(1, 0, 100, 0));
    assertThat(f.devices().get(0).usedmem()).isEqualTo(11264);
    assertThat(
            fit(List.of(dev("d", 0, 0, 10, 0, 11264, 11260, 100, 0)), req(1, 0, 100, 0)).reason())
        .contains("CardInsufficientMemory");
  }

  @Test
  void v68_migDeviceFailsExplicitly() {
    DeviceUsage mig =
        new DeviceUsage(
            "GPU-0", 0, "NVIDIA", "NVIDIA", 0, "mig", true, 7, 0, 8192, 0, 100, 0, List.of(),
            false);
    assertThat(fit(List.of(mig), req(1, 0, 50, 0)).reason())
        .isEqualTo("1/1 CardMigTopologyInfeasible");
  }

  @Test
  void v70_addResourceUsage() {
    DeviceUsage d =
        dev("d", 0, 0, 10, 0, 8000, 2000, 100, 15)
            .withAllocation(ContainerDevice.of("d", "NVIDIA", 1024, 50));
    assertThat(List.of(d.used(), d.usedcores(), d.usedmem())).containsExactly(1, 65, 3024);
  }

  @Test
  void reasonsSortedAndJoined() {
    DeviceUsage sick =
        new DeviceUsage(
            "a",
            0,
            "NVIDIA",
            "NVIDIA",
            0,
            "hami-core",
            false,
            10,
            0,
            100,
            0,
            100,
            0,
            List.of(),
            false);
    assertThat(fit(List.of(sick, card("b", 1, 10), card("c", 2, 10)), req(1, 50, 101, 0)).reason())
        .isEqualTo("1/3 CardNotHealth, 2/3 CardInsufficientMemory");
  }
}
