package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.testing.RunReport;
import dev.hamilock.bind.testing.Scenario;
import dev.hamilock.bind.testing.ScenarioRunner;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.OwnerLiveness.BindPhase;
import dev.hamilock.core.OwnerLiveness.HolderStatus;
import dev.hamilock.core.OwnerLiveness.PodPhase;
import dev.hamilock.core.OwnerLiveness.State;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.k8s.lock.PodOwnerLiveness;
import dev.hamilock.testing.logs.LogCapture;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 13 item 1 (HAMi#3096) over HTTP: {@link PodOwnerLiveness#status} reports the holder's node,
 * phase and bind-phase from one pod GET, and gang binds whose device plugin stalls past the lock
 * timeout keep the no-overlap property with real client-java stacks.
 */
class Hami3096StalledAllocateOverHttpTest {
  static final VendorRegistry REGISTRY = VendorRegistry.discover();

  @Test
  void podOwnerLivenessReportsNodePhaseAndBindPhase() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      k8s.create(
          Map.of(
              "apiVersion",
              "v1",
              "kind",
              "Pod",
              "metadata",
              Map.of(
                  "name",
                  "pod-a",
                  "namespace",
                  "default",
                  "annotations",
                  Map.of("hami.io/bind-phase", "allocating")),
              "spec",
              Map.of(
                  "nodeName",
                  "gpu-1",
                  "containers",
                  List.of(Map.of("name", "main", "image", "cuda"))),
              "status",
              Map.of("phase", "Pending")));
      k8s.create(
          Map.of(
              "apiVersion",
              "v1",
              "kind",
              "Pod",
              "metadata",
              Map.of("name", "pod-r", "namespace", "default"),
              "spec",
              Map.of(
                  "nodeName",
                  "gpu-1",
                  "containers",
                  List.of(Map.of("name", "main", "image", "cuda"))),
              "status",
              Map.of("phase", "Running")));
      PodOwnerLiveness liveness =
          PodOwnerLiveness.create(
              k8s.newApiClient(Duration.ofSeconds(5)), Duration.ofSeconds(5), 3);
      k8s.resetCounters();
      HolderStatus a = liveness.status(LockOwner.of("default", "pod-a"));
      assertThat(k8s.totalRequests()).as("one GET").isEqualTo(1);
      assertThat(a)
          .isEqualTo(
              HolderStatus.of(
                  State.ALIVE,
                  Optional.of("gpu-1"),
                  PodPhase.PENDING,
                  Optional.of(BindPhase.ALLOCATING)));
      assertThat(a.mayStillBeAllocated("gpu-1")).isTrue();
      assertThat(a.mayStillBeAllocated("gpu-2")).isFalse();
      HolderStatus r = liveness.status(LockOwner.of("default", "pod-r"));
      assertThat(r.phase()).contains(PodPhase.RUNNING);
      assertThat(r.bindPhase()).isEmpty();
      assertThat(r.mayStillBeAllocated("gpu-1")).isFalse();
      assertThat(liveness.status(LockOwner.of("default", "gone")))
          .isEqualTo(HolderStatus.of(State.NOT_FOUND));
    }
  }

  @Test
  void stalledAllocatesOverHttpKeepTheirLockAndNeverOverlap() throws Exception {
    try (LogCapture log = LogCapture.start()) {
      assertThat(stalledRuns())
          .as("waiting binders met an expired lock whose holder was still allocating")
          .isPositive();
      assertThat(
              log.expect(
                  "WARN dev\\.hamilock\\.core\\.store\\.StoreNodeLock - node gpu-1: .* has expired .*"
                      + "bind-phase allocating"))
          .as("each such meeting says why the lock is not taken over")
          .isNotEmpty();
    }
  }

  /** Two stalled-plugin runs over HTTP; returns how often a waiter met a stuck holder. */
  private static int stalledRuns() throws Exception {
    int guarded = 0;
    for (int run = 0; run < 2; run++) {
      List<Scenario.GpuSpec> gpus =
          List.of(new Scenario.GpuSpec("GPU-" + new UUID(3, run), 81920, "NVIDIA A100"));
      List<Scenario.PodSpec> members = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        members.add(
            new Scenario.PodSpec(
                    "w" + i,
                    1,
                    10_000 + 1000 * i,
                    0,
                    10,
                    i % 2,
                    0,
                    false,
                    Scenario.BindingFault.NONE)
                .withAllocateStall(true));
      }
      Scenario s =
          new Scenario(
              List.of(new Scenario.NodeSpec("gpu-1", gpus)),
              List.of(new Scenario.GangSpec("job", members)),
              2);
      try (BackendScenarioBackend backend = BackendScenarioBackend.onFreshEmulator()) {
        // waiters on a synced watch look at the lock at least every second (watched poll interval):
        // each pause after a clock jump is longer, so they see the expired lock of the stalled pod
        RunReport r =
            ScenarioRunner.builder(REGISTRY)
                .stallPause(Duration.ofMillis(1300))
                .retryPolicy(
                    RetryPolicy.builder()
                        .pollInterval(Duration.ofMillis(5))
                        .retryTimeout(Duration.ofSeconds(20))
                        .build())
                .build()
                .run(s, backend);
        assertThat(r.violations()).as("run %d", run).isEmpty();
        assertThat(r.binds().values())
            .as("run %d", run)
            .allMatch(b -> b.outcome() == BindOutcome.BOUND);
        guarded += backend.stuckHolderContentions();
      }
    }
    return guarded;
  }
}
