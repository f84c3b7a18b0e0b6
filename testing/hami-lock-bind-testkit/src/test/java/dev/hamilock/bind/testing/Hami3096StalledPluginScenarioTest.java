package dev.hamilock.bind.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.testing.logs.LogCapture;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 13 item 1 (HAMi#3096) in the gang-bind no-overlap property: a device plugin whose Allocate
 * stalls past the lock timeout (on the run's injected clock) while other gang members wait for the
 * node. With the holder-still-allocating guard nobody takes the lock over and the property holds;
 * with the pre-3096 rule (expiry alone transfers: {@link
 * InMemoryScenarioBackend#withPre3096Takeover()}) the stalled Allocate serves the new holder's
 * allocation and the property fails.
 */
class Hami3096StalledPluginScenarioTest {
  static final VendorRegistry REGISTRY = VendorRegistry.discover();

  /** One node with one 80 GB card; a gang of two pods on two replicas, both Allocates stall. */
  static Scenario twoStalledPodsOnOneCard() {
    List<Scenario.GpuSpec> gpus =
        List.of(new Scenario.GpuSpec("GPU-" + new UUID(1, 2), 81920, "NVIDIA A100"));
    List<Scenario.PodSpec> members = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      members.add(
          new Scenario.PodSpec(
                  "w" + i, 1, 10_000 + 1000 * i, 0, 10, i, 0, false, Scenario.BindingFault.NONE)
              .withAllocateStall(true));
    }
    return new Scenario(
        List.of(new Scenario.NodeSpec("gpu-1", gpus)),
        List.of(new Scenario.GangSpec("job", members)),
        2);
  }

  /**
   * StoreNodeLock's WARN when an expired lock is kept for a holder still allocating (HAMi#3096).
   */
  static final String KEPT_FOR_ALLOCATING_HOLDER =
      "WARN dev\\.hamilock\\.core\\.store\\.StoreNodeLock - node .* has expired .* "
          + "bind-phase allocating: the device plugin may still serve it";

  @Test
  void theStalledAllocateKeepsItsLockAndThePropertyHolds() throws Exception {
    try (LogCapture log = LogCapture.start()) {
      for (int run = 0; run < 10; run++) {
        Scenario s = twoStalledPodsOnOneCard();
        RunReport r =
            ScenarioRunner.builder(REGISTRY).build().run(s, new InMemoryScenarioBackend());
        assertThat(r.violations()).as("run %d", run).isEmpty();
        assertThat(r.binds().values())
            .as("run %d", run)
            .allMatch(b -> b.outcome() == BindOutcome.BOUND);
      }
      assertThat(log.expect(KEPT_FOR_ALLOCATING_HOLDER))
          .as("the waiting binder says why it does not take the expired lock over")
          .isNotEmpty();
    }
  }

  /**
   * Falsification: the same runs with expiry alone transferring the lock must break the property.
   */
  @Test
  void withThePre3096RuleTheStalledAllocateServesTheNewHoldersAllocation() throws Exception {
    int violating = 0;
    List<String> kinds = new ArrayList<>();
    for (int run = 0; run < 10; run++) {
      RunReport r =
          ScenarioRunner.builder(REGISTRY)
              .build()
              .run(twoStalledPodsOnOneCard(), new InMemoryScenarioBackend().withPre3096Takeover());
      if (!r.violations().isEmpty()) {
        violating++;
        r.violations().forEach(v -> kinds.add(v.kind().name()));
      }
    }
    assertThat(violating)
        .as("runs violating the property without the guard (%s)", kinds)
        .isGreaterThan(0);
  }

  /** Generated one-node scenarios with stalled Allocates (ScenarioGenerator.stalledPlugin). */
  @Test
  void thePropertyHoldsOnGeneratedStalledPluginScenarios() throws Exception {
    Random rnd = new Random(3096);
    try (LogCapture log = LogCapture.start()) {
      log.expect(KEPT_FOR_ALLOCATING_HOLDER);
      runGeneratedStalledPluginScenarios(rnd);
    }
  }

  private static void runGeneratedStalledPluginScenarios(Random rnd) throws Exception {
    for (int i = 0; i < 25; i++) {
      Scenario s = ScenarioGenerator.stalledPlugin(rnd);
      assertThat(s.pods()).anyMatch(Scenario.PodSpec::allocateStallsPastLockTimeout);
      RunReport r =
          ScenarioRunner.builder(REGISTRY)
              .timeScale(0.002)
              .build()
              .run(s, new InMemoryScenarioBackend());
      assertThat(r.violations()).as("seed-run %d: %s", i, s).isEmpty();
      assertThat(r.binds().size() + r.unschedulable().size()).isEqualTo(s.pods().size());
    }
  }
}
