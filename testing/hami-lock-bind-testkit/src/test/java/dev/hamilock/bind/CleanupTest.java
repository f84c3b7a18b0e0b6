package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.locks;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link Cleanup}: a bind that does not end bound here clears (or restores) the allocation
 * annotations and releases its locks by exact owner.
 */
class CleanupTest {
  final InMemoryCluster cluster = InMemoryCluster.create();
  final BindLocks locks =
      new BindLocks(locks(cluster), NodeLockAcquirer.create(RetryPolicy.defaults()));
  final Cleanup cleanup = new Cleanup(cluster, cluster, REGISTRY, locks);

  /** A call for p1 on gpu-1 holding its lock, its allocation annotations written. */
  BindCall lockedAndAnnotated() throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    PodView p = cluster.addPod(pod("p1", 1, 1000, 0)).view();
    PodFitter fitter = PodFitter.create(REGISTRY);
    PodRequests r = fitter.requests(p);
    BindCall c = new BindCall(NS, "p1", "", "gpu-1", BindCallTest.ticking());
    c.subject(Subject.of(p, r, REGISTRY));
    assertThat(locks.acquire(c, null, null).join()).isEmpty();
    var usage =
        new UsageReconstructor(REGISTRY)
            .nodeUsage(cluster.readNode("gpu-1").orElseThrow(), List.of());
    var devices = fitter.fit(r, usage, FitContext.newMemo()).devices();
    c.written =
        Optional.of(
            AllocationAnnotations.bindPatch(REGISTRY, p, Set.of(), "gpu-1", devices, c.now(), ""));
    cluster.patchPodMetadata(NS, "p1", c.written.get());
    assertThat(lockValue(cluster, "gpu-1")).isNotNull();
    return c;
  }

  @Test
  void aFailureClearsTheAllocationReleasesTheLockAndReportsTheStop() throws Exception {
    BindCall c = lockedAndAnnotated();

    BindResult r = cleanup.fail(c, new Stop(BindOutcome.DOES_NOT_FIT, "no room", null));

    assertThat(r.outcome()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(r.reason()).isEqualTo("no room");
    assertThat(r.locksHeld()).isFalse();
    assertThat(r.cleanupProblems()).isEmpty();
    assertThat(r.timings().cleanup()).isPositive();
    assertThat(lockValue(cluster, "gpu-1")).isNull();
    assertThat(annotations(cluster, "p1")).doesNotContainKey(ALLOCATED);
  }

  @Test
  void aPodThatIsGoneIsNotPatchedButItsLockIsReleased() throws Exception {
    BindCall c = lockedAndAnnotated();
    long patches = cluster.operationCount(InMemoryCluster.Operation.PATCH_POD);

    BindResult r = cleanup.fail(c, new Stop(BindOutcome.POD_NOT_FOUND, "gone", null));

    assertThat(cluster.operationCount(InMemoryCluster.Operation.PATCH_POD)).isEqualTo(patches);
    assertThat(r.locksHeld()).isFalse();
    assertThat(lockValue(cluster, "gpu-1")).isNull();
  }

  @Test
  void aPodBoundElsewhereGetsItsAnnotationsRestoredAndTheLockReleased() throws Exception {
    BindCall c = lockedAndAnnotated();

    BindResult r =
        cleanup.boundElsewhere(c, Optional.of("gpu-2"), BindingPostResult.alreadyBound("gpu-2"));

    assertThat(r.outcome()).isEqualTo(BindOutcome.ALREADY_BOUND);
    assertThat(r.boundNode()).contains("gpu-2");
    assertThat(r.reason()).startsWith("pod default/p1 is bound to node gpu-2: ");
    assertThat(annotations(cluster, "p1")).doesNotContainKey(ALLOCATED);
    assertThat(lockValue(cluster, "gpu-1")).isNull();
  }

  @Test
  void aLockThatWentAwayWithItsNodeCountsAsReleased() throws Exception {
    BindCall c = lockedAndAnnotated();
    cluster.removeNode("gpu-1");

    BindResult r = cleanup.fail(c, new Stop(BindOutcome.FAILED, "x", null));

    assertThat(r.locksHeld()).isFalse();
    assertThat(r.cleanupProblems()).isEmpty();
  }
}
