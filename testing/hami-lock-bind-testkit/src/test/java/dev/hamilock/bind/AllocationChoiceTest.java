package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.CLOCK;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.bind.PodBinder.Rescore;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@link AllocationChoice}: under the lock, keep the Filter's allocation while it fits, else re-fit
 * on the usage read now, else DOES_NOT_FIT; with the re-fit off, trust the Filter as HAMi does.
 */
class AllocationChoiceTest {
  final InMemoryCluster cluster = InMemoryCluster.create();
  final PodFitter fitter = PodFitter.create(REGISTRY);

  AllocationChoice choice(boolean refit) {
    return new AllocationChoice(
        cluster,
        REGISTRY,
        fitter,
        new UsageReconstructor(REGISTRY),
        refit,
        Rescore.OFF,
        new java.util.HashSet<>());
  }

  /** A call for {@code pod} (stored) on gpu-1, with its requests. */
  record Call(BindCall c, PodRequests requests) {}

  Call call(PodView pod) throws Exception {
    PodView stored = cluster.addPod(pod).view();
    return callFor(stored);
  }

  Call callFor(PodView stored) throws Exception {
    BindCall c = new BindCall(NS, stored.name(), "", "gpu-1", BindCallTest.ticking());
    PodRequests r = fitter.requests(stored);
    c.subject(Subject.of(stored, r, REGISTRY));
    return new Call(c, r);
  }

  /** Another pod bound by this flow on gpu-1, using {@code memMiB} of its first card. */
  void used(String name, int memMiB) {
    String uid = cluster.addPod(pod(name, 1, memMiB, 0)).view().uid();
    assertThat(binder(cluster).build().bind(NS, name, uid, "gpu-1").isBound()).isTrue();
  }

  /** {@code pod} stored with the Filter's allocation on the empty gpu-1 recorded on it. */
  PodView filtered(PodView pod) throws Exception {
    PodView stored = cluster.addPod(pod).view();
    NodeFit fit =
        fitter.fit(
            fitter.requests(stored),
            new UsageReconstructor(REGISTRY)
                .nodeUsage(cluster.readNode("gpu-1").orElseThrow(), List.of()),
            FitContext.newMemo());
    cluster.patchPodMetadata(
        NS,
        pod.name(),
        AllocationAnnotations.bindPatch(
            REGISTRY, stored, "gpu-1", fit.devices(), CLOCK.instant(), ""));
    return cluster.readPod(NS, pod.name()).orElseThrow().view();
  }

  @Test
  void withoutARecordedAllocationThePodIsRefittedOnTheUsageReadNowAndTheStepTimed()
      throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    used("other", 10000);
    Call x = call(pod("p1", 1, 5000, 0));

    Optional<Stop> stop = choice(true).choose(x.c(), x.requests());

    assertThat(stop).isEmpty();
    assertThat(x.c().source).isEqualTo(AllocationSource.REFITTED);
    assertThat(x.c().devices.orElseThrow().forVendor("NVIDIA").get(0))
        .extracting(ContainerDevice::usedmem)
        .containsExactly(5000);
    assertThat(cluster.operationCount(InMemoryCluster.Operation.READ_NODE)).isPositive();
    assertThat(x.c().bound(Optional.empty()).timings().refit()).isPositive();
  }

  @Test
  void aPodThatNoLongerFitsDoesNotFitWithTheNodesReason() throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    used("other", 10000);
    Call x = call(pod("p1", 1, 6000, 0));

    Stop stop = choice(true).choose(x.c(), x.requests()).orElseThrow();

    assertThat(stop.outcome()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(stop.reason()).startsWith("node gpu-1: ");
    assertThat(x.c().devices).isEmpty();
  }

  @Test
  void aMissingNodeIsNodeNotFound() throws Exception {
    Call x = call(pod("p1", 1, 6000, 0));

    Stop stop = choice(true).choose(x.c(), x.requests()).orElseThrow();

    assertThat(stop.outcome()).isEqualTo(BindOutcome.NODE_NOT_FOUND);
    assertThat(stop.reason()).isEqualTo("node gpu-1 not found");
  }

  @Test
  void aFittingFilterAllocationIsKeptAndWithTheRefitOffEvenAnOverCommittingOneIsTrusted()
      throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    Call kept = callFor(filtered(pod("p1", 1, 6000, 0)));
    assertThat(choice(true).choose(kept.c(), kept.requests())).isEmpty();
    assertThat(kept.c().source).isEqualTo(AllocationSource.FILTER_KEPT);

    filtered(pod("other", 1, 10000, 0)); // assigned to the card too: 6000 MiB no longer fit
    BindCall trusting = new BindCall(NS, "p1", "", "gpu-1", CLOCK);
    trusting.subject(kept.c().subject());
    assertThat(choice(false).choose(trusting, kept.requests())).isEmpty();
    assertThat(trusting.source).isEqualTo(AllocationSource.UNCHECKED);
    assertThat(choice(true).choose(kept.c(), kept.requests()).orElseThrow().reason())
        .startsWith("the Filter's allocation no longer fits (");
  }
}
