package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.scenarios.ScenarioGens;
import dev.hamilock.bind.testing.BindInvariants;
import dev.hamilock.bind.testing.RunReport;
import dev.hamilock.bind.testing.Scenario;
import dev.hamilock.bind.testing.ScenarioBackend;
import dev.hamilock.bind.testing.ScenarioRunner;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.reference.HamiLockValue;
import dev.hamilock.testing.generators.Props;
import dev.hamilock.testing.logs.LogCapture;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 item 5, the skewed writer ({@link Scenario.LockRemoval#SKEWED_TAKEOVER}) on the HTTP
 * emulator: HAMi's Go scheduler ({@code hami-reference}'s {@code HamiNodeLock}, HAMi's {@code
 * LockNode} of {@code pkg/util/nodelock/nodelock.go}) on a clock one lock timeout and a second
 * ahead takes a binder's fresh lock over as expired. The actor is the skew (without it HAMi leaves
 * the lock alone), and it has teeth: with the binders' confirmation trusting their own young stamp
 * ({@link ScenarioRunner.LockMode#STAMP_TRUSTING_CONFIRMATION}, the confirmation before issue 23's
 * fault 1 fix) a card is over-committed. The property with this actor in the mix runs in {@code
 * GangBindOnBackendsTest} on the emulator and the real kube-apiserver.
 *
 * <p>Here too the teeth of the other actors as hami-lock-bind-testkit's {@code
 * GangBindOtherActorsProperties} has them in memory: the same scenarios ({@link
 * ScenarioGens#scenariosWithOtherActors()}) and judgement (no card over-committed that the audit
 * misses, no swapped allocation, no over-commit in runs without a removal after the binder's last
 * confirmation), falsified on the emulator with the unlock or the sidecar fix reverted; each test
 * stops at its first counterexample and prints how many examples it took.
 */
class SkewedWriterOnEmulatorTest {
  static final ExecutorService POOL =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "skewed-writer-property");
            t.setDaemon(true);
            return t;
          });

  @AfterAll
  static void shutdown() {
    POOL.shutdownNow();
  }

  /**
   * HAMi's {@code time.Since(lockTime) > NodeLockTimeout}: a stamp of now is not expired on an
   * unskewed clock (contention, nothing written) and is on a clock ahead by the timeout and a
   * second (the old value replaced by the writer's own, stamped with its clock).
   */
  @Test
  void onlyTheSkewedClockTakesAFreshLockOver() throws Exception {
    try (ApiServerEmulator server = ApiServerEmulator.start();
        BackendScenarioBackend backend = new BackendScenarioBackend(server, "skew")) {
      backend.createNode(
          new Scenario.NodeSpec("n", List.of(new Scenario.GpuSpec("GPU-n", 15360, "T4")))
              .toNodeView());
      backend.createPod( // the holder is alive: HAMi would take a dangling lock over
          new Scenario.PodSpec("a", 1, 3000, 0, 30, 0, 0, false, Scenario.BindingFault.NONE)
              .toPodView("g"));
      String fresh = HamiLockValue.format(Instant.now(), ZoneOffset.UTC, "skew", "a");
      server.mutate(
          "nodes",
          null,
          "n",
          n -> {
            ((ObjectNode) n.path("metadata").path("annotations")).put(NodeLock.DEFAULT_KEY, fresh);
            return n;
          });
      Duration timeout = Duration.ofMinutes(5);

      ScenarioBackend.LockTakeover unskewed =
          backend.takeOverLockWithSkewedClock("n", NodeLock.DEFAULT_KEY, timeout, Duration.ZERO);
      assertThat(unskewed.replaced()).contains(fresh);
      assertThat(unskewed.written()).isEmpty();
      assertThat(backend.releaseSkewedLock(unskewed)).as("HAMi left it alone").contains(fresh);
      assertThat(backend.nodes().get(0).annotations()).containsEntry(NodeLock.DEFAULT_KEY, fresh);

      ScenarioBackend.LockTakeover skewed =
          backend.takeOverLockWithSkewedClock(
              "n", NodeLock.DEFAULT_KEY, timeout, timeout.plusSeconds(1));
      assertThat(skewed.replaced()).contains(fresh);
      assertThat(skewed.written()).get().asString().endsWith("," + skewed.holder());
      assertThat(backend.releaseSkewedLock(skewed)).isEqualTo(skewed.written());
      assertThat(backend.nodes().get(0).annotations()).doesNotContainKey(NodeLock.DEFAULT_KEY);
    }
  }

  /**
   * Teeth of the skewed writer: binders whose confirmation trusts their own young stamp bind on a
   * lock HAMi's scheduler took over, and a card is over-committed (capacity or swapped allocation,
   * not merely the lost lock's outcome); the doctor's audit reports every card over its capacity in
   * every run ({@link BindInvariants#checkAudit}). With the binders' hand-off guard off ({@link
   * ScenarioRunner.Builder#bindPhaseHidden}): it stops the later binders while the pod bound on the
   * lost lock waits for the device plugin, which left no counterexample in 60 examples.
   */
  @Test
  void withTheStampTrustingConfirmationASkewedTakeoverOverCommitsACard() {
    try (LogCapture log = LogCapture.start()) {
      log.expect("WARN dev\\.hamilock\\.bind\\.PodBinder - node lock .* is no longer held by pod");
      Props.Falsified f =
          Props.expectFalsified(
              150,
              q ->
                  q.forAll(ScenarioGens.scenariosWithOnlyTheSkewedWriter())
                      .checkAssert(
                          scenario ->
                              Props.unchecked(
                                  () -> {
                                    RunReport r = run(scenario, STAMP_TRUSTING);
                                    assertThat(
                                            r.violations().stream()
                                                .filter(
                                                    v ->
                                                        v.kind()
                                                            == BindInvariants.Kind
                                                                .OVERCOMMIT_NOT_AUDITED)
                                                .toList())
                                        .as("the audit missed")
                                        .isEmpty();
                                    assertThat(
                                            r.violations().stream()
                                                .filter(
                                                    v ->
                                                        BindInvariants.CAPACITY_OR_SWAP.contains(
                                                            v.kind()))
                                                .toList())
                                        .as("takeovers %s", r.skewedTakeovers())
                                        .isEmpty();
                                  })));
      assertThat(f.cause())
          .as("a violation, not a crash, for %s", f.example())
          .isInstanceOf(AssertionError.class);
      assertThat(f.cause().getMessage())
          .containsAnyOf("OVERCOMMIT", "SWAPPED", "SHARED")
          .doesNotContain("NOT_AUDITED");
    }
  }

  /** Binders confirming from their own young stamp, the hand-off guard off. */
  static final UnaryOperator<ScenarioRunner.Builder> STAMP_TRUSTING =
      r -> r.lockMode(ScenarioRunner.LockMode.STAMP_TRUSTING_CONFIRMATION).bindPhaseHidden(true);

  /**
   * Teeth of the unlock actor: binders whose confirmation trusts their own young stamp (the
   * confirmation before issue 23's fault 1 fix) bind on a lock another writer removed, beside the
   * pod that took it next. With the hand-off guard off, as in memory: with it on, the fault needs
   * the rarer race of two binds that both read the usage before either wrote.
   */
  @Test
  void withTheStampTrustingConfirmationTheRemovalsFalsifyTheProperty() {
    falsifiedBy("stamp-trusting confirmation", STAMP_TRUSTING);
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

  static RunReport run(Scenario scenario, UnaryOperator<ScenarioRunner.Builder> runner)
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
