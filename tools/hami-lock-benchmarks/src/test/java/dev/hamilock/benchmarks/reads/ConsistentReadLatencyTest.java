package dev.hamilock.benchmarks.reads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.testkit.ApiServerEmulator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Smoke: every case's requests are well formed on the emulator; no timing is asserted. */
class ConsistentReadLatencyTest {

  @Test
  void everyCaseRunsAndTheListNotOlderThanAPodWriteHoldsThatWrite() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.builder().servingDra(true).start()) {
      List<ConsistentReadLatency> rows = ConsistentReadLatency.measure(k8s, 3);
      assertThat(rows).hasSize(8);
      assertThat(rows)
          .allSatisfy(r -> assertThat(r.p50Ms()).isPositive().isLessThanOrEqualTo(r.maxMs()));
      assertThat(ConsistentReadLatency.table(rows).lines()).hasSize(10);
      // again on the same objects: the second run reuses them
      assertThat(ConsistentReadLatency.measure(k8s, 3)).hasSize(8);
    }
  }

  @Test
  void fewerThanThreeSamplesAreRefused() {
    assertThatThrownBy(() -> ConsistentReadLatency.measure(null, 2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("2");
  }
}
