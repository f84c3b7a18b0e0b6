package dev.hamilock.device.nvidia;

import static dev.hamilock.device.nvidia.Nv.V;
import static dev.hamilock.device.nvidia.Nv.container;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.InvalidResourceRequestException;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.view.PodView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Vectors V46, V47, V26 (lock predicate) and spec §7.21-7.22. */
class NvidiaRequestTest {
  static Optional<ContainerDeviceRequest> parse(VendorConfig cfg, String limits) throws Exception {
    return V.parseRequest(container("c", kv(limits), Map.of()), cfg);
  }

  static Map<String, String> kv(String s) {
    Map<String, String> m = new HashMap<>();
    if (!s.isBlank()) {
      for (String p : s.split(" ")) {
        String[] x = p.split("=");
        m.put("nvidia.com/" + x[0], x[1]);
      }
    }
    return m;
  }

  @ParameterizedTest(name = "{0} -> {1},{2},{3},{4}")
  @CsvSource(
      delimiter = '|',
      value = {
        "gpu=1|1|0|100|0",
        "gpu=2 gpumem=4096|2|4096|101|0",
        "gpu=1 gpumem-percentage=50|1|0|50|0",
        "gpu=1 gpumem-percentage=150|1|0|100|0",
        "gpu=1 gpumem-percentage=4294967346|1|0|100|0",
        "gpu=1 gpumem-percentage=101|1|0|100|0",
        "gpu=1 gpucores=50|1|0|100|50",
        "gpu=1 gpumem-percentage=0|1|0|100|0",
        "gpu=1 gpumem-percentage=-1|1|0|100|0",
        "gpu=1 gpumem=2000 gpumem-percentage=0|1|2000|101|0",
        "gpu=1 gpumem=8Ki|1|8192|101|0",
        "gpu=1 gpucores=120|1|0|100|120",
      })
  void v46(String limits, int nums, int mem, int pct, int cores) throws Exception {
    assertThat(parse(V.defaultConfig(), limits)).contains(Nv.req(nums, mem, pct, cores));
  }

  @Test
  void v46_noRequestAndRequestsOnly() throws Exception {
    assertThat(parse(V.defaultConfig(), "")).isEmpty();
    assertThat(parse(V.defaultConfig(), "gpu=0")).isEmpty();
    assertThat(
            V.parseRequest(
                container("c", Map.of(), Map.of("nvidia.com/gpu", "1")), V.defaultConfig()))
        .contains(Nv.req(1, 0, 100, 0));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "gpu=1 gpumem=16Gi|nvidia.com/gpumem|17179869184",
        "gpu=1 gpumem=16.0Gi|nvidia.com/gpumem|17179869184",
        "gpu=1 gpumem=1.5|nvidia.com/gpumem|1.5",
        "gpu=1 gpumem=-5|nvidia.com/gpumem|-5",
        "gpu=1.5|nvidia.com/gpu|1.5",
        "gpu=1 gpucores=500m|nvidia.com/gpucores|0.500",
        "gpu=1 gpumem-percentage=50.5|nvidia.com/gpumem-percentage|50.5",
      })
  void v46_strict_refusesWhatHamiDrops(String limits, String resource, String value) {
    assertThatThrownBy(() -> parse(V.defaultConfig(), limits))
        .isInstanceOf(InvalidResourceRequestException.class)
        .hasMessageContaining("container c")
        .hasMessageContaining(resource)
        .hasMessageContaining(value)
        .satisfies(
            e -> assertThat(((InvalidResourceRequestException) e).resource()).isEqualTo(resource));
  }

  @Test
  void v47_factorAndDefaultMemory() throws Exception {
    VendorConfig f2 = new VendorConfig(V.defaultConfig().resourceNames(), 0, 0, 1, 2);
    assertThat(parse(f2, "gpu=1 gpumem=1024")).contains(Nv.req(1, 2048, 101, 0));
    assertThatThrownBy(() -> parse(f2, "gpu=1 gpumem=1Gi"))
        .isInstanceOf(InvalidResourceRequestException.class);
    VendorConfig d512 = new VendorConfig(V.defaultConfig().resourceNames(), 512, 0, 1, 1);
    assertThat(parse(d512, "gpu=1")).contains(Nv.req(1, 512, 101, 0));
    assertThat(parse(d512, "gpu=1 gpumem-percentage=0")).contains(Nv.req(1, 512, 101, 0));
    assertThat(parse(d512, "gpu=1 gpumem=0")).contains(Nv.req(1, 512, 101, 0));
    VendorConfig custom = VendorConfig.of("hami.io/gpu", "hami.io/gpumem");
    assertThat(
            V.parseRequest(
                container("c", Map.of("hami.io/gpu", "1", "hami.io/gpumem", "100"), Map.of()),
                custom))
        .contains(Nv.req(1, 100, 101, 0));
  }

  @Test
  void v26_lockPredicate_regularContainersOnly() {
    var gpu = container("g", Map.of("nvidia.com/gpu", "1"), Map.of());
    var cpu = container("c", Map.of("cpu", "1"), Map.of());
    assertThat(
            V.needsLock(
                PodView.builder("d", "p").containers(List.of(cpu)).build(), V.defaultConfig()))
        .isFalse();
    assertThat(
            V.needsLock(
                PodView.builder("d", "p").containers(List.of(cpu, gpu)).build(), V.defaultConfig()))
        .isTrue();
    assertThat(
            V.needsLock(
                PodView.builder("d", "p")
                    .initContainers(List.of(gpu))
                    .containers(List.of(cpu))
                    .build(),
                V.defaultConfig()))
        .isFalse();
    assertThat(V.nodeLockKey()).contains("hami.io/mutex.lock");
  }
}
