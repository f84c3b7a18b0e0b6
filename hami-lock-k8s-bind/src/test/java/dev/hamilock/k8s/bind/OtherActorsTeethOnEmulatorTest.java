package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.scenarios.ScenarioGens;
import dev.hamilock.bind.testing.BindInvariants;
import dev.hamilock.bind.testing.RunReport;
import dev.hamilock.bind.testing.Scenario;
import dev.hamilock.bind.testing.ScenarioRunner;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.testing.generators.Props;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 item 5, the teeth of the other actors on the HTTP emulator, as hami-lock-bind-testkit's
 * {@code GangBindOtherActorsProperties} has them on the in-memory cluster: the same scenarios
 * ({@link ScenarioGens#scenariosWithOtherActors()}) and the same judgement — no run has a card
 * over-committed that {@code hami-lock-doctor audit} misses or a swapped allocation, and runs
 * without a removal after the binder's last confirmation have no over-commit at all — falsified
 * with each actor's fix reverted, every request a real HTTP request to a fresh emulator. Each test
 * stops at its first counterexample; the examples it took are printed.
 */
class OtherActorsTeethOnEmulatorTest {
  static final ExecutorService POOL =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "other-actors-teeth");
            t.setDaemon(true);
            return t;
          });

  @AfterAll
  static void shutdown() {
    POOL.shutdownNow();
  }

  /**
   * Teeth of the unlock actor: binders whose confirmation trusts their own young stamp (the
   * confirmation before issue 23's fault 1 fix) bind on a lock another writer removed, beside the
   * pod that took it next. With the hand-off guard off, as in memory: with it on, the fault needs
   * the rarer race of two binds that both read the usage before either wrote.
   */
  @Test
  void withTheStampTrustingConfirmationTheRemovalsFalsifyTheProperty() {
    falsifiedBy(
        "stamp-trusting confirmation",
        r -> r.lockMode(ScenarioRunner.LockMode.STAMP_TRUSTING_CONFIRMATION).bindPhaseHidden(true));
  }

  /**
   * Teeth of the sidecar actor: schedulers that see native sidecars as run-to-completion init
   * containers (the aggregation before issue 23's fault 2 fix) over-commit the cards the sidecars
   * really run on.
   */
  @Test
  void withSidecarsSeenAsInitContainersThePropertyIsFalsified() {
    falsifiedBy("sidecars seen as init containers", r -> r.sidecarsSeenAsInit(true));
  }

  private static void falsifiedBy(String fault, UnaryOperator<ScenarioRunner.Builder> runner) {
    AtomicInteger tries = new AtomicInteger();
    try (LogCapture log = LogCapture.start()) {
      log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - node lock .* is no longer held by pod");
      Props.Falsified f =
          Props.expectFalsified(
              EXAMPLES,
              q ->
                  q.forAll(ScenarioGens.scenariosWithOtherActors())
                      .checkAssert(
                          scenario ->
                              Props.unchecked(
                                  () -> {
                                    tries.incrementAndGet();
                                    judge(run(scenario, runner));
                                  })));
      System.out.printf(
          "[emulator] %s: property falsified after %d examples%n", fault, tries.get());
      assertThat(f.cause())
          .as("a violation, not a crash, for %s", f.example())
          .isInstanceOf(AssertionError.class);
      assertThat(f.cause().getMessage())
          .containsAnyOf(List.of("OVERCOMMIT", "SWAPPED", "SHARED").toArray(String[]::new))
          .doesNotContain("NOT_AUDITED");
    }
  }

  /** At most this many examples per test (each stops at its first counterexample). */
  static final int EXAMPLES = 60;

  /** The in-memory property's judgement of one run. */
  private static void judge(RunReport r) {
    assertThat(r.violations())
        .filteredOn(v -> v.kind() == BindInvariants.Kind.OVERCOMMIT_NOT_AUDITED)
        .as("the audit missed; all violations %s", r.violations())
        .isEmpty();
    assertThat(r.violations())
        .filteredOn(v -> v.kind() == BindInvariants.Kind.SWAPPED_ALLOCATION)
        .isEmpty();
    if (r.lockRemovals(Scenario.LockRemoval.AFTER_CONFIRMATION) == 0) {
      assertThat(r.violations())
          .filteredOn(v -> BindInvariants.CAPACITY_OR_SWAP.contains(v.kind()))
          .isEmpty();
    }
  }

  private static RunReport run(Scenario scenario, UnaryOperator<ScenarioRunner.Builder> runner)
      throws Exception {
    try (BackendScenarioBackend backend = BackendScenarioBackend.onFreshEmulator()) {
      return runner
          .apply(
              ScenarioRunner.builder(GangBindOverHttpProperties.REGISTRY)
                  .executor(POOL)
                  .timeScale(GangBindOverHttpProperties.TIME_SCALE)
                  .retryPolicy(
                      RetryPolicy.builder()
                          .pollInterval(Duration.ofMillis(5))
                          .retryTimeout(Duration.ofSeconds(20))
                          .build())
                  .runTimeout(Duration.ofSeconds(60)))
          .build()
          .run(scenario, backend);
    }
  }
}
