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
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link AllocationChoice}: under the lock, keep the Filter's allocation while it fits, else re-fit
 * on the usage read now, else DOES_NOT_FIT; with the re-fit off, trust the Filter as HAMi does.
 */
class AllocationChoiceTest {
  final InMemoryCluster cluster = InMemoryCluster.create();
  final PodFitter fitter = PodFitter.create(REGISTRY);

  AllocationChoice choice(boolean refit) {
    return choice(refit, cluster);
  }

  AllocationChoice choice(boolean refit, ClusterReader reader) {
    return new AllocationChoice(
        reader,
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
            REGISTRY, stored, Set.of(), "gpu-1", fit.devices(), CLOCK.instant(), ""));
    return cluster.readPod(NS, pod.name()).orElseThrow().view();
  }

  @Test
  void withoutARecordedAllocationThePodIsRefittedOnTheUsageReadNowAndTheStepTimed()
      throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    used("other", 10000);
    Call x = call(pod("p1", 1, 5000, 0));

    Optional<Stop> stop = choice(true).choose(x.c(), x.requests(), null);

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

    Stop stop = choice(true).choose(x.c(), x.requests(), null).orElseThrow();

    assertThat(stop.outcome()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(stop.reason()).startsWith("node gpu-1: ");
    assertThat(x.c().devices).isEmpty();
  }

  @Test
  void aMissingNodeIsNodeNotFound() throws Exception {
    Call x = call(pod("p1", 1, 6000, 0));

    Stop stop = choice(true).choose(x.c(), x.requests(), null).orElseThrow();

    assertThat(stop.outcome()).isEqualTo(BindOutcome.NODE_NOT_FOUND);
    assertThat(stop.reason()).isEqualTo("node gpu-1 not found");
  }

  @Test
  void aFittingFilterAllocationIsKeptAndWithTheRefitOffEvenAnOverCommittingOneIsTrusted()
      throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    Call kept = callFor(filtered(pod("p1", 1, 6000, 0)));
    assertThat(choice(true).choose(kept.c(), kept.requests(), null)).isEmpty();
    assertThat(kept.c().source).isEqualTo(AllocationSource.FILTER_KEPT);

    filtered(pod("other", 1, 10000, 0)); // assigned to the card too: 6000 MiB no longer fit
    BindCall trusting = new BindCall(NS, "p1", "", "gpu-1", CLOCK);
    trusting.subject(kept.c().subject());
    assertThat(choice(false).choose(trusting, kept.requests(), null)).isEmpty();
    assertThat(trusting.source).isEqualTo(AllocationSource.UNCHECKED);
    assertThat(choice(true).choose(kept.c(), kept.requests(), null).orElseThrow().reason())
        .startsWith("the Filter's allocation no longer fits (");
  }

  /**
   * Issue 25 item 2: with an executor the node's read runs while the pods are listed (the hand-off
   * waits for the two lists, not three reads). Each read waits, at most 10 s, for the other to be
   * in progress: read one after the other, neither meets the other and the test fails.
   */
  @Test
  void theNodeIsReadWhileThePodsAreListed() throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    CyclicBarrier both = new CyclicBarrier(2);
    AtomicInteger met = new AtomicInteger();
    ClusterReader meeting =
        new ForwardingCluster(cluster, null) {
          @Override
          public Optional<NodeView> readNode(String name) throws ClusterException {
            meet(both, met);
            return super.readNode(name);
          }

          @Override
          public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
            meet(both, met);
            return super.listPodsAssignedTo(node);
          }
        };
    Call x = call(pod("p1", 1, 5000, 0));
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      assertThat(choice(true, meeting).choose(x.c(), x.requests(), pool)).isEmpty();
    } finally {
      pool.shutdownNow();
    }
    assertThat(met).hasValue(2);
    assertThat(x.c().source).isEqualTo(AllocationSource.REFITTED);
  }

  /** An executor that refuses the node's and DRA reads: they run on the binding thread. */
  @Test
  void readsTheExecutorRefusesRunOnTheBindingThread() throws Exception {
    cluster.addNode(node("gpu-1", 1, 15360));
    Call x = call(pod("p1", 1, 5000, 0));

    Optional<Stop> stop =
        choice(true)
            .choose(
                x.c(),
                x.requests(),
                task -> {
                  throw new RejectedExecutionException("full");
                });

    assertThat(stop).isEmpty();
    assertThat(x.c().source).isEqualTo(AllocationSource.REFITTED);
    assertThat(cluster.operationCount(InMemoryCluster.Operation.READ_NODE)).isEqualTo(1);
  }

  private static void meet(CyclicBarrier both, AtomicInteger met) {
    try {
      both.await(10, TimeUnit.SECONDS);
      met.incrementAndGet();
    } catch (Exception e) {
      // the other read was not in progress: not counted
    }
  }
}
