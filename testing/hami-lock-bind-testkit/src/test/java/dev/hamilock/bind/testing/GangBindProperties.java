package dev.hamilock.bind.testing;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.scenarios.ScenarioGens;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.testing.generators.Props;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * THE property: concurrent gang binds from replicas filtering on stale snapshots, through the bind
 * flow and the device-plugin hand-off, never produce overlapping GPU slices, swapped allocations,
 * leftover locks or half-written allocations — and it fails without the lock or without the re-fit
 * under the lock.
 */
class GangBindProperties {
  static final VendorRegistry REGISTRY = VendorRegistry.discover();
  static final ExecutorService POOL =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "gang-bind-property");
            t.setDaemon(true);
            return t;
          });

  /** 0–30 ms Allocate times become 0–60 µs: keeps 1,000 tries within a few seconds. */
  static final double TIME_SCALE = 0.002;

  static final Set<BindInvariants.Kind> CAPACITY =
      EnumSet.of(
          BindInvariants.Kind.MEMORY_OVERCOMMIT,
          BindInvariants.Kind.CORES_OVERCOMMIT,
          BindInvariants.Kind.SLOTS_OVERCOMMIT,
          BindInvariants.Kind.EXCLUSIVE_SHARED,
          BindInvariants.Kind.ANNOTATED_OVERCOMMIT);

  @AfterAll
  static void shutdown() {
    POOL.shutdownNow();
  }

  static RunReport run(Scenario s, ScenarioRunner.LockMode mode, boolean refit) throws Exception {
    return run(s, mode, refit, new InMemoryScenarioBackend());
  }

  static RunReport run(
      Scenario s, ScenarioRunner.LockMode mode, boolean refit, InMemoryScenarioBackend backend)
      throws Exception {
    return ScenarioRunner.builder(REGISTRY)
        .executor(POOL)
        .timeScale(TIME_SCALE)
        .lockMode(mode)
        .refitUnderLock(refit)
        .build()
        .run(s, backend);
  }

  /**
   * Issue 28 (dra4): with about one card in three held whole by an allocated ResourceClaim, no HAMi
   * slice is ever handed out on such a card (the ledger counts the claim as the card's exclusive
   * holder), 300 scenarios.
   */
  @Test
  void concurrentGangBindsNeverOverlapTheCardsResourceClaimsHold() {
    Props.qt(300)
        .withShrinkCycles(300)
        .forAll(ScenarioGens.scenariosWithDra())
        .checkAssert(
            scenario ->
                Props.unchecked(
                    () -> {
                      RunReport report = run(scenario, ScenarioRunner.LockMode.REAL, true);
                      assertThat(report.violations())
                          .as("violations; bind outcomes %s", report.outcomeCounts())
                          .isEmpty();
                    }));
  }

  /** Teeth: a fit that ignores the claims (none served to it) hands out slices of claimed cards. */
  @Test
  void aFitIgnoringResourceClaimsFalsifiesIt() {
    Props.Falsified f =
        Props.expectFalsified(
            200,
            q ->
                q.forAll(ScenarioGens.scenariosWithDra())
                    .checkAssert(
                        scenario ->
                            Props.unchecked(
                                () ->
                                    assertThat(
                                            of(
                                                run(
                                                    scenario,
                                                    ScenarioRunner.LockMode.REAL,
                                                    true,
                                                    new InMemoryScenarioBackend()
                                                        .servingDra(false)),
                                                CAPACITY))
                                        .isEmpty())));
    assertThat(f.cause())
        .as("a violation, not a crash, for %s", f.example())
        .isInstanceOf(AssertionError.class);
  }

  static List<BindInvariants.Violation> of(RunReport r, Set<BindInvariants.Kind> kinds) {
    return r.violations().stream().filter(v -> kinds.contains(v.kind())).toList();
  }

  /**
   * 1000 scenarios; a counterexample is shrunk by up to 1000 re-runs (about as long as the 1000
   * examples).
   */
  @Test
  void concurrentGangBindsNeverOverlap() {
    Props.qt(1000)
        .withShrinkCycles(1000)
        .forAll(ScenarioGens.scenarios())
        .checkAssert(
            scenario ->
                Props.unchecked(
                    () -> {
                      RunReport report = run(scenario, ScenarioRunner.LockMode.REAL, true);
                      assertThat(report.violations())
                          .as("violations; bind outcomes %s", report.outcomeCounts())
                          .isEmpty();
                    }));
  }

  /**
   * Teeth: with a no-op lock the device plugin hands pods each other's slices, and re-fits race —
   * once the hand-off guard is off too. Since the Filter's allocation is written before the usage
   * reads (issue 25), concurrent binds on one node each see the other's {@code allocating} pod and
   * the guard backs one off (as in Dekker's protocol: write your flag, then read the others'): with
   * the no-op lock alone no counterexample turned up in 1000 examples.
   */
  @Test
  void withoutTheLockThePropertyIsFalsified() {
    Set<BindInvariants.Kind> kinds = EnumSet.copyOf(CAPACITY);
    kinds.add(BindInvariants.Kind.SWAPPED_ALLOCATION);
    kinds.add(BindInvariants.Kind.NOT_SERVED);
    Props.Falsified f =
        Props.expectFalsified(
            1000, // under load the interleavings race less: 1 run in 6 found none in 200 (load ~5)
            q ->
                q.forAll(ScenarioGens.scenarios())
                    .checkAssert(
                        scenario ->
                            Props.unchecked(
                                () ->
                                    assertThat(
                                            of(
                                                ScenarioRunner.builder(REGISTRY)
                                                    .executor(POOL)
                                                    .timeScale(TIME_SCALE)
                                                    .lockMode(ScenarioRunner.LockMode.NO_OP)
                                                    .bindPhaseHidden(true)
                                                    .build()
                                                    .run(scenario, new InMemoryScenarioBackend()),
                                                kinds))
                                        .isEmpty())));
    assertThat(f.cause())
        .as("a violation, not a crash, for %s", f.example())
        .isInstanceOf(AssertionError.class);
  }

  /**
   * Issue 23: the audit judge over the over-commits binders without the lock make: in every run
   * {@code hami-lock-doctor audit}'s rule ({@code DeviceUsage#overCommit}, from the pods'
   * allocation annotations) reports every card over-committed there, 400 runs. The generators make
   * 0-core pods as often as exclusive (100-core) ones, so cards are shared by an exclusive pod and
   * 0-core ones only (no sum over): with the exclusive-holder rule reverted this property was
   * falsified in one of two runs (after 162 examples), not reliably yet.
   */
  @Test
  void withoutTheLockEveryOverCommittedCardIsAudited() {
    AtomicLong exclusiveShared = new AtomicLong();
    Props.qt(400)
        .withShrinkCycles(20)
        .forAll(ScenarioGens.scenarios())
        .checkAssert(
            scenario ->
                Props.unchecked(
                    () -> {
                      RunReport r = run(scenario, ScenarioRunner.LockMode.NO_OP, true);
                      assertThat(of(r, EnumSet.of(BindInvariants.Kind.OVERCOMMIT_NOT_AUDITED)))
                          .as("over-committed cards the audit misses")
                          .isEmpty();
                      exclusiveShared.addAndGet(
                          of(r, EnumSet.of(BindInvariants.Kind.AUDITED_OVERCOMMIT)).stream()
                              .filter(v -> v.detail().contains("exclusive (100 % cores)"))
                              .count());
                    }));
    System.out.printf(
        "gang-bind property without the lock: 400 runs, audited exclusive cards shared %d%n",
        exclusiveShared.get());
  }

  /**
   * Teeth: trusting the Filter's stale choices (HAMi's Bind) over-commits GPUs despite the lock.
   */
  @Test
  void withoutTheRefitUnderTheLockThePropertyIsFalsified() {
    Props.Falsified f =
        Props.expectFalsified(
            1000,
            q ->
                q.forAll(ScenarioGens.scenarios())
                    .checkAssert(
                        scenario ->
                            Props.unchecked(
                                () ->
                                    assertThat(
                                            of(
                                                run(scenario, ScenarioRunner.LockMode.REAL, false),
                                                CAPACITY))
                                        .isEmpty())));
    assertThat(f.cause())
        .as("a violation, not a crash, for %s", f.example())
        .isInstanceOf(AssertionError.class);
  }
}
