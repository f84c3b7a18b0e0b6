package dev.hamilock.bind.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The framework-neutral generator and runner, as hami-lock-k8s will use them. */
class ScenarioGeneratorTest {
  static final VendorRegistry REGISTRY = VendorRegistry.discover();

  @Test
  void generatedScenariosStayWithinTheDocumentedBounds() {
    Random rnd = new Random(7);
    Set<Integer> memories = new HashSet<>();
    boolean exclusive = false;
    boolean percentage = false;
    for (int i = 0; i < 500; i++) {
      Scenario s = ScenarioGenerator.random(rnd);
      assertThat(s.nodes()).hasSizeBetween(1, 4);
      assertThat(s.replicas()).isBetween(2, 4);
      assertThat(s.gangs()).hasSizeBetween(1, 3);
      s.nodes()
          .forEach(
              n -> {
                assertThat(n.gpus()).hasSizeBetween(1, 8);
                n.gpus().forEach(g -> memories.add(g.memoryMiB()));
              });
      assertThat(s.gpusByUuid()).hasSize(s.nodes().stream().mapToInt(n -> n.gpus().size()).sum());
      for (Scenario.GangSpec g : s.gangs()) {
        assertThat(g.members()).hasSizeBetween(2, 8);
        for (Scenario.PodSpec p : g.members()) {
          assertThat(p.gpus()).isBetween(1, 2);
          assertThat(p.memoryMiB() == 0 ? p.memoryPercentage() : p.memoryMiB())
              .isBetween(p.memoryMiB() == 0 ? 1 : 500, p.memoryMiB() == 0 ? 100 : 20000);
          assertThat(p.allocateDelayMicros()).isBetween(0, 30_000);
          exclusive |= p.exclusive();
          percentage |= p.memoryPercentage() > 0;
        }
      }
    }
    assertThat(memories).containsExactlyInAnyOrder(15360, 24576, 40960, 81920);
    assertThat(exclusive).isTrue();
    assertThat(percentage).isTrue();
  }

  @Test
  void thePropertyHoldsWithApiLatencyOnSeededScenarios() throws Exception {
    Random rnd = new Random(2645);
    try (LogCapture log = LogCapture.start()) {
      // random scenarios include stalled Allocates (HAMi#3096): their expired locks are kept
      log.expect(Hami3096StalledPluginScenarioTest.KEPT_FOR_ALLOCATING_HOLDER);
      runSeededScenarios(rnd);
    }
  }

  private static void runSeededScenarios(Random rnd) throws Exception {
    for (int i = 0; i < 40; i++) {
      Scenario s = ScenarioGenerator.random(rnd);
      RunReport r =
          ScenarioRunner.builder(REGISTRY)
              .timeScale(0.002)
              .build()
              .run(
                  s,
                  new InMemoryScenarioBackend(
                      InMemoryCluster.builder().latency(Duration.ofNanos(20_000))));
      assertThat(r.violations()).as("seed-run %d: %s", i, s).isEmpty();
      assertThat(r.binds().size() + r.unschedulable().size()).isEqualTo(s.pods().size());
    }
  }
}
