package dev.hamilock.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.benchmarks.convergence.FailFastBackoffAlgorithm;
import dev.hamilock.benchmarks.convergence.RequestMix;
import dev.hamilock.benchmarks.convergence.Scenario;
import dev.hamilock.benchmarks.convergence.Stats;
import dev.hamilock.testkit.RequestKey;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The harness's small rules: scenario matrix and bound, kube-scheduler backoff, statistics, request
 * split.
 */
class ConvergenceModelTest {

  @Test
  void matrixCoversEveryGangSizeLatencyAndReplicaCount() {
    List<Scenario> m = Scenario.matrix();
    assertThat(m).hasSize(24).doesNotHaveDuplicates();
    assertThat(m)
        .filteredOn(s -> !s.singleNode())
        .hasSize(4)
        .allSatisfy(s -> assertThat(s.nodes()).isEqualTo(32).isEqualTo(s.gangSize()));
    assertThat(m).extracting(Scenario::latencyMs).containsOnly(0, 2);
    assertThat(m).extracting(Scenario::replicas).containsOnly(1, 3);
    assertThat(m)
        .filteredOn(Scenario::singleNode)
        .extracting(Scenario::gangSize)
        .containsOnly(2, 5, 8, 16, 32);
  }

  @Test
  void lowerBoundIsMembersPerNodeTimesHold() {
    Duration hold = Duration.ofMillis(20);
    assertThat(new Scenario(5, 1, 0, 1).lowerBound(hold)).isEqualTo(Duration.ofMillis(100));
    assertThat(new Scenario(32, 32, 0, 3).lowerBound(hold)).isEqualTo(hold);
    assertThat(new Scenario(5, 2, 0, 1).lowerBound(hold)).isEqualTo(Duration.ofMillis(60));
    assertThatThrownBy(() -> new Scenario(2, 3, 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nodes=3");
  }

  @Test
  void kubeSchedulerBackoffDoublesFromOneSecondToTen() {
    assertThat(
            List.of(1, 2, 3, 4, 5, 6, 40).stream().map(FailFastBackoffAlgorithm::backoff).toList())
        .containsExactly(
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            Duration.ofSeconds(4),
            Duration.ofSeconds(8),
            Duration.ofSeconds(10),
            Duration.ofSeconds(10),
            Duration.ofSeconds(10));
    assertThatThrownBy(() -> FailFastBackoffAlgorithm.backoff(0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void nearestRankPercentilesAndMedian() {
    List<Double> v = List.of(5.0, 1.0, 4.0, 2.0, 3.0);
    assertThat(Stats.median(v)).isEqualTo(3.0);
    assertThat(Stats.median(List.of(1.0, 2.0, 3.0, 10.0))).isEqualTo(2.5);
    assertThat(Stats.percentile(v, 90)).isEqualTo(5.0);
    assertThat(Stats.percentile(v, 40)).isEqualTo(2.0);
    assertThat(Stats.median(List.of())).isNaN();
    assertThatThrownBy(() -> Stats.percentile(v, 0)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void requestMixSeparatesLockTrafficFromBindingsAndWatches() {
    RequestMix mix =
        RequestMix.of(
            Map.of(
                new RequestKey("get", "nodes"),
                6L,
                new RequestKey("get", "pods"),
                1L,
                new RequestKey("patch", "nodes"),
                3L,
                new RequestKey("create", "pods/binding"),
                2L,
                new RequestKey("watch", "nodes"),
                1L,
                new RequestKey("list", "nodes"),
                1L));
    assertThat(mix.lockGets()).isEqualTo(7);
    assertThat(mix.lockPatches()).isEqualTo(3);
    assertThat(mix.lockOther()).isEqualTo(1);
    assertThat(mix.bindings()).isEqualTo(2);
    assertThat(mix.watches()).isEqualTo(1);
    assertThat(mix.lockTotal()).isEqualTo(11);
  }
}
