package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.scenarios.ScenarioGens;
import dev.hamilock.bind.testing.BindInvariants;
import dev.hamilock.bind.testing.RunReport;
import dev.hamilock.bind.testing.Scenario;
import dev.hamilock.bind.testing.ScenarioRunner;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.testing.generators.Props;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * THE gang-bind property of hami-lock-bind ({@code GangBindProperties}), on the HTTP emulator: the
 * same scenarios ({@link ScenarioGens}: 1–4 nodes of 1–8 real cards, 1–3 gangs of 2–8 pods, 2–4
 * replicas filtering on stale snapshots, simulated device plugins, lost and applied-but-unanswered
 * Bindings), the same runner and the same invariants ({@link BindInvariants}: no GPU over-committed
 * in memory, cores or slots, exclusive pods alone, no swapped allocations, every bound pod served
 * its own allocation, no lock left, no half-written allocation) — but every read, patch, lock
 * operation and Binding is a real HTTP request of client-java through {@link KubernetesCluster} and
 * {@code KubernetesLockStack}, each replica and each device plugin with its own client stack.
 */
class GangBindOverHttpProperties {
  static final VendorRegistry REGISTRY = VendorRegistry.discover();
  static final ExecutorService POOL =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "gang-bind-http-property");
            t.setDaemon(true);
            return t;
          });

  /** 0–30 ms Allocate times become 0–1.5 ms: the lock is held across real round trips meanwhile. */
  static final double TIME_SCALE = 0.05;

  @AfterAll
  static void shutdown() {
    POOL.shutdownNow();
  }

  /** 50 scenarios; a counterexample is shrunk by up to 20 re-runs. */
  @Test
  void concurrentGangBindsOverHttpNeverOverlap() {
    LogCapture log = LogCapture.start(); // closed below, or by a failing property's unwinding
    try {
      Props.qt(50)
          .withShrinkCycles(20)
          .forAll(ScenarioGens.scenarios())
          .checkAssert(scenario -> Props.unchecked(() -> neverOverlap(scenario)));
    } catch (RuntimeException | Error e) {
      log.close(); // every captured entry printed: the failure's context
      throw e;
    }
    long lostLocks = log.expect(GangBindOnBackendsTest.LOST_LOCK).size();
    log.close();
    System.out.println(
        "gang-bind property over HTTP: binds refused on a lost lock "
            + lostLocks
            + " (WARN captured)");
  }

  private static void neverOverlap(Scenario scenario) throws Exception {
    try (BackendScenarioBackend backend = BackendScenarioBackend.onFreshEmulator()) {
      RunReport report =
          ScenarioRunner.builder(REGISTRY)
              .executor(POOL)
              .timeScale(TIME_SCALE)
              .retryPolicy(
                  RetryPolicy.builder()
                      .pollInterval(Duration.ofMillis(5))
                      .retryTimeout(Duration.ofSeconds(20))
                      .build())
              .runTimeout(Duration.ofSeconds(60))
              .build()
              .run(scenario, backend);
      assertThat(report.violations())
          .as("violations; bind outcomes %s", report.outcomeCounts())
          .isEmpty();
    }
  }
}
