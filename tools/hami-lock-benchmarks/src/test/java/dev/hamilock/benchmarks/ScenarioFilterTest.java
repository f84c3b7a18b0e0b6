package dev.hamilock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.benchmarks.convergence.Scenario;
import org.junit.jupiter.api.Test;

/** The {@code --only} scenario filter of {@link BenchmarksMain}. */
class ScenarioFilterTest {

  private final Scenario n32ThreeReplicas = new Scenario(32, 1, 0, 3);

  @Test
  void everyGivenKeyMustMatch() {
    assertThat(BenchmarksMain.matches(n32ThreeReplicas, "N=32,replicas=3,latency=0")).isTrue();
    assertThat(BenchmarksMain.matches(n32ThreeReplicas, "N=32, nodes=1")).isTrue();
    assertThat(BenchmarksMain.matches(n32ThreeReplicas, "N=32,replicas=1")).isFalse();
    assertThat(BenchmarksMain.matches(n32ThreeReplicas, "latency=2")).isFalse();
    assertThat(BenchmarksMain.matches(n32ThreeReplicas, "nodes=32")).isFalse();
  }

  @Test
  void theFilterSelectsExactlyTheMatchingScenariosOfTheMatrix() {
    assertThat(
            Scenario.matrix().stream()
                .filter(s -> BenchmarksMain.matches(s, "N=32,nodes=1,replicas=3"))
                .toList())
        .containsExactly(new Scenario(32, 1, 0, 3), new Scenario(32, 1, 2, 3));
  }

  @Test
  void anUnknownKeyOrAMissingValueIsNamed() {
    assertThatThrownBy(() -> BenchmarksMain.matches(n32ThreeReplicas, "gang=32"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("gang");
    assertThatThrownBy(() -> BenchmarksMain.matches(n32ThreeReplicas, "N32"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("N32");
  }
}
