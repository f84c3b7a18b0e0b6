package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.fit.DeviceOrdering;
import dev.hamilock.device.spi.fit.ScoringWeights;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceUsage;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Vectors V69 (ordering), V71-V73. */
class ScoringTest {
  static DeviceUsage dev(
      String id,
      int index,
      int numa,
      int count,
      int used,
      int totalcore,
      int usedcores,
      int totalmem,
      int usedmem) {
    return new DeviceUsage(
        id,
        index,
        "NVIDIA",
        "NVIDIA",
        numa,
        "hami-core",
        true,
        count,
        used,
        totalmem,
        usedmem,
        totalcore,
        usedcores,
        List.of(),
        false);
  }

  @Test
  void v71_deviceScore() {
    DeviceUsage d = dev("a", 0, 0, 10, 2, 4, 1, 8192, 2048);
    assertThat(DeviceOrdering.score(d, List.of(), ScoringWeights.DEFAULT)).isEqualTo(7.0f);
    var same = new ContainerDeviceRequest(4, "NVIDIA", 1024, 101, 1);
    var other = new ContainerDeviceRequest(1, "OTHER", 4000, 101, 50);
    assertThat(DeviceOrdering.score(d, List.of(same, other), ScoringWeights.DEFAULT))
        .isEqualTo(11.75f);
    DeviceUsage e = dev("b", 0, 0, 10, 0, 10, 0, 10000, 0);
    assertThat(
            DeviceOrdering.score(
                e,
                List.of(new ContainerDeviceRequest(1, "NVIDIA", 0, 50, 2)),
                ScoringWeights.DEFAULT))
        .isEqualTo(8.0f);
    assertThat(
            DeviceOrdering.score(
                e,
                List.of(
                    new ContainerDeviceRequest(1, "NVIDIA", 0, 10, 1),
                    new ContainerDeviceRequest(1, "NVIDIA", 0, 20, 2),
                    other),
                ScoringWeights.DEFAULT))
        .isEqualTo(8.0f);
    assertThat(
            DeviceOrdering.score(
                dev("z", 0, 0, 0, 2, 4, 1, 8192, 2048), List.of(), ScoringWeights.DEFAULT))
        .isZero();
    assertThat(
            DeviceOrdering.score(
                dev("z", 0, 0, 10, 2, 0, 1, 8192, 2048), List.of(), ScoringWeights.DEFAULT))
        .isZero();
    assertThat(
            DeviceOrdering.score(
                dev("z", 0, 0, 10, 2, 4, 1, 0, 2048), List.of(), ScoringWeights.DEFAULT))
        .isZero();
  }

  @Test
  void v72_weights() {
    var req = List.of(new ContainerDeviceRequest(1, "NVIDIA", 0, 40, 0));
    DeviceUsage a = dev("gpu-a", 0, 0, 10, 1, 100, 90, 100, 10);
    DeviceUsage b = dev("gpu-b", 1, 0, 10, 7, 100, 10, 100, 20);
    assertThat(DeviceOrdering.score(a, req, ScoringWeights.DEFAULT)).isEqualTo(16f);
    assertThat(DeviceOrdering.score(b, req, ScoringWeights.DEFAULT)).isEqualTo(15f);
    ScoringWeights w = ScoringWeights.parse("slot=1,core=1,memory=3");
    float sa = DeviceOrdering.score(a, req, w);
    float sb = DeviceOrdering.score(b, req, w);
    assertThat(sa).isEqualTo(26f);
    assertThat(sb).isEqualTo(27f);
    int[] order = {0, 1};
    DeviceOrdering.sort(
        order, new DeviceUsage[] {a, b}, new float[] {sa, sb}, GpuPolicy.parse("binpack"), false);
    assertThat(order[order.length - 1]).as("binpack tries gpu-b first").isEqualTo(1);
  }

  @Test
  void v73_weightsParse() {
    assertThat(ScoringWeights.parse("slot=1,core=2,memory=3"))
        .isEqualTo(new ScoringWeights(1, 2, 3));
    assertThat(ScoringWeights.parse(" memory = 3, slot = 1, core = 0 "))
        .isEqualTo(new ScoringWeights(1, 0, 3));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "''|expected slot, core, and memory weights",
        "slot=1,memory=3|expected slot, core, and memory weights",
        "slot=1,core,memory=3|expected key=value entries",
        "core=high|\"core\" weight must be an integer",
        "core=-1|\"core\" weight must not be negative",
        "bandwidth=2|unknown weight \"bandwidth\"",
        "slot=1,slot=2,memory=3|duplicate \"slot\" weight",
        "slot=0,core=0,memory=0|at least one weight must be positive",
      })
  void v73_weightErrors(String text, String message) {
    assertThatThrownBy(() -> ScoringWeights.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }

  /** V69: the order Fit walks (from the end) for given scores. */
  @Test
  void v69_numaOrdering() {
    DeviceUsage[] d = {
      dev("A", 0, 0, 10, 0, 100, 0, 100, 0),
      dev("B", 1, 0, 10, 0, 100, 0, 100, 0),
      dev("C", 2, 1, 10, 0, 100, 0, 100, 0)
    };
    float[] s = {5, 1, 3};
    int[] spreadNoGroup = {0, 1, 2};
    DeviceOrdering.sort(spreadNoGroup, d, s, GpuPolicy.parse("spread"), false);
    assertThat(spreadNoGroup).containsExactly(0, 2, 1); // A5, C3, B1
    int[] grouped = {0, 1, 2};
    DeviceOrdering.sort(grouped, d, s, GpuPolicy.parse("spread"), true);
    assertThat(grouped).containsExactly(0, 1, 2); // numa asc, score desc: A, B | C
    int[] binpackGrouped = {0, 1, 2};
    DeviceOrdering.sort(binpackGrouped, d, s, GpuPolicy.parse("binpack"), true);
    assertThat(binpackGrouped).containsExactly(2, 1, 0); // numa desc, score asc: C | B, A
    DeviceUsage[] pqr = {
      dev("P", 0, 0, 10, 0, 100, 0, 100, 0),
      dev("Q", 1, 1, 10, 0, 100, 0, 100, 0),
      dev("R", 2, 1, 10, 0, 100, 0, 100, 0)
    };
    int[] o = {0, 1, 2};
    DeviceOrdering.sort(o, pqr, new float[] {1, 8, 5}, GpuPolicy.parse("spread"), false);
    assertThat(o[2]).as("P tried first").isEqualTo(0);
  }

  @Test
  void policyParsingAndTies() {
    GpuPolicy p = GpuPolicy.parse("numa, binpack,mutex,binpack,topology-aware");
    assertThat(p.list()).isTrue();
    assertThat(p.keys()).containsExactly(GpuPolicy.SortKey.NUMA, GpuPolicy.SortKey.BINPACK);
    assertThat(p.mutex()).isTrue();
    assertThat(p.topologyAware()).isTrue();
    assertThat(GpuPolicy.parse("numa").list()).isTrue();
    assertThat(GpuPolicy.parse("mutex").isMutexOrder()).isTrue();
    DeviceUsage[] d = {
      dev("x", 3, 0, 10, 0, 100, 0, 100, 0),
      dev("y", 1, 0, 10, 0, 100, 0, 100, 0),
      dev("w", 2, 0, 10, 0, 100, 0, 100, 0)
    };
    int[] o = {0, 1, 2};
    DeviceOrdering.sort(o, d, new float[3], GpuPolicy.parse("spread"), false);
    assertThat(o).as("ties by index ascending").containsExactly(1, 2, 0);
    int[] m = {0, 1, 2};
    DeviceUsage[] used = {
      dev("a", 0, 0, 10, 1, 100, 0, 100, 0),
      dev("b", 1, 0, 10, 3, 100, 0, 100, 0),
      dev("c", 2, 0, 10, 0, 100, 0, 100, 0)
    };
    DeviceOrdering.sort(m, used, new float[3], GpuPolicy.parse("mutex"), false);
    assertThat(m).as("mutex: used desc").containsExactly(1, 0, 2);
  }
}
