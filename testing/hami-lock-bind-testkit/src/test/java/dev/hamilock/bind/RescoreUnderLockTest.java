package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.gangPod;
import static dev.hamilock.bind.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 16 item 10: the configured device policy survives concurrent filters. Four gang members
 * filtered on the same usage snapshot all record the same GPU (the snapshot does not show the
 * others' choices); the binds are serialized by the node lock, and under it each member's Filter
 * allocation is re-scored on the usage the re-fit already read: {@code spread} ends one member per
 * GPU, {@code binpack} packs onto the GPU another scheduler filled meanwhile. With the re-score off
 * (HAMi's and this library's earlier behaviour) the snapshot's choice stands — the falsification
 * half of each test shows the assertion fails without it.
 */
class RescoreUnderLockTest {
  static final String NODE = "n1";
  static final int A40_MIB = 46068;

  final InMemoryCluster cluster = InMemoryCluster.create();
  final ExecutorService pool = Executors.newFixedThreadPool(6);

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  /** Filters every member on one snapshot, concurrently (no member sees another's choice). */
  private List<FilterDecision> filterOnOneSnapshot(ExtenderFilter filter, List<PodView> members)
      throws Exception {
    Map<String, NodeUsage> snapshot = filter.readUsage(List.of(NODE), Optional.empty());
    CountDownLatch gate = new CountDownLatch(1);
    List<CompletableFuture<FilterDecision>> futures = new ArrayList<>();
    for (PodView m : members) {
      futures.add(
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  gate.await();
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
                return filter.decide(m, snapshot.values());
              },
              pool));
    }
    gate.countDown();
    List<FilterDecision> out = new ArrayList<>();
    for (int i = 0; i < members.size(); i++) {
      FilterDecision d = futures.get(i).get(10, TimeUnit.SECONDS);
      assertThat(d.node()).contains(NODE);
      filter.annotate(
          members.get(i),
          d); // HAMi's Filter annotations, as kube-scheduler's Filter call writes them
      out.add(d);
    }
    return out;
  }

  /**
   * Binds every member concurrently while a device plugin serves each bound member (releasing its
   * lock).
   */
  private List<BindResult> bindConcurrently(PodBinder binder, List<PodView> members)
      throws Exception {
    DevicePluginHandoff plugin = Fixtures.handoff(cluster);
    CountDownLatch gate = new CountDownLatch(1);
    List<CompletableFuture<BindResult>> binds = new ArrayList<>();
    for (PodView m : members) {
      binds.add(
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  gate.await();
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
                return binder.bind(NS, m.name(), "", NODE);
              },
              pool));
    }
    gate.countDown();
    Set<String> served = new HashSet<>();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (served.size() < members.size() && System.nanoTime() < deadline) {
      HandoffResult h = plugin.allocateAll(NODE);
      if (h.status() == HandoffResult.Status.COMPLETED) {
        served.add(h.pod().orElseThrow().name());
      } else {
        Thread.sleep(1);
      }
    }
    List<BindResult> out = new ArrayList<>();
    for (CompletableFuture<BindResult> f : binds) {
      out.add(f.get(20, TimeUnit.SECONDS));
    }
    assertThat(served).hasSize(members.size());
    return out;
  }

  private static PodBinder.Builder binder(InMemoryCluster cluster, PodFitter fitter) {
    return PodBinder.builder(cluster, cluster, REGISTRY, Fixtures.locks(cluster))
        .clock(Fixtures.CLOCK)
        .fitter(fitter)
        .retryPolicy(
            RetryPolicy.builder()
                .pollInterval(Duration.ofMillis(2))
                .retryTimeout(Duration.ofSeconds(20))
                .build());
  }

  private List<PodView> members(int memMiB, int cores) {
    List<PodView> out = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      out.add(cluster.addPod(gangPod("member-" + i, 1, memMiB, cores)).view());
    }
    return out;
  }

  private String gpuOf(String pod) {
    String allocated = annotations(cluster, pod).get(ALLOCATED);
    assertThat(allocated).as("allocation of " + pod).isNotNull();
    return allocated.substring(0, allocated.indexOf(','));
  }

  private static Set<String> recordedGpus(List<FilterDecision> ds) {
    Set<String> out = new HashSet<>();
    for (FilterDecision d : ds) {
      for (ContainerDevice cd : d.devices().orElseThrow().forVendor("NVIDIA").get(0)) {
        out.add(cd.uuid());
      }
    }
    return out;
  }

  private Set<String> boundGpus(List<PodView> members) {
    Set<String> out = new HashSet<>();
    members.forEach(m -> out.add(gpuOf(m.name())));
    return out;
  }

  // ------------------------------------------------------------------------------------- spread

  private Set<String> spreadRun(PodBinder.Rescore rescore, List<BindResult> results)
      throws Exception {
    cluster.addNode(node(NODE, 4, A40_MIB));
    List<PodView> members =
        members(10000, 25); // all four fit on one card: only the policy separates them
    PodFitter spread = PodFitter.create(REGISTRY, "spread", "binpack");
    ExtenderFilter filter =
        ExtenderFilter.builder(cluster, REGISTRY).fitter(spread).writer(cluster).build();

    List<FilterDecision> ds = filterOnOneSnapshot(filter, members);
    assertThat(recordedGpus(ds))
        .as("concurrent filters on one snapshot agree on one GPU")
        .hasSize(1);

    results.addAll(
        bindConcurrently(binder(cluster, spread).rescoreUnderLock(rescore).build(), members));
    assertThat(results)
        .allSatisfy(r -> assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND));
    return boundGpus(members);
  }

  @Test
  void spreadPutsFourConcurrentlyFilteredGangMembersOnePerGpu() throws Exception {
    List<BindResult> results = new ArrayList<>();

    Set<String> gpus = spreadRun(PodBinder.Rescore.GANG_MEMBERS, results);

    assertThat(gpus)
        .as("one member per GPU, as spread picks given the usage under the lock")
        .hasSize(4);
    assertThat(results)
        .extracting(BindResult::allocationSource)
        .containsOnly(AllocationSource.FILTER_KEPT, AllocationSource.RESCORED)
        .contains(AllocationSource.RESCORED);
  }

  @Test
  void withoutTheRescoreTheSnapshotsChoiceStandsAndSpreadIsLost() throws Exception {
    List<BindResult> results = new ArrayList<>();

    Set<String> gpus = spreadRun(PodBinder.Rescore.OFF, results);

    assertThat(gpus).as("falsification: the assertion above fails without the re-score").hasSize(1);
    assertThat(results)
        .extracting(BindResult::allocationSource)
        .containsOnly(AllocationSource.FILTER_KEPT);
  }

  // ------------------------------------------------------------------------------------ binpack

  private Map<String, Set<String>> binpackRun(PodBinder.Rescore rescore) throws Exception {
    cluster.addNode(node(NODE, 2, A40_MIB));
    List<PodView> members = members(3000, 10);
    PodFitter binpack = PodFitter.create(REGISTRY, "binpack", "binpack");
    ExtenderFilter filter =
        ExtenderFilter.builder(cluster, REGISTRY).fitter(binpack).writer(cluster).build();

    List<FilterDecision> ds = filterOnOneSnapshot(filter, members);
    Set<String> recorded = recordedGpus(ds);
    assertThat(recorded).as("concurrent filters on one snapshot agree on one GPU").hasSize(1);
    String snapshotGpu = recorded.iterator().next();
    String otherGpu =
        Fixtures.gpu(NODE, 0).equals(snapshotGpu) ? Fixtures.gpu(NODE, 1) : Fixtures.gpu(NODE, 0);
    // meanwhile another scheduler binds a big pod onto the other card (after the members'
    // snapshot):
    // under the lock that card is fuller than the snapshot's card with the gang's own Filter claims
    PodView other = cluster.addPod(Fixtures.pod("other", 1, 30000, 50)).view();
    String entry = otherGpu + ",NVIDIA,30000,50:;";
    cluster.patchPodMetadata(
        NS,
        "other",
        MetadataPatch.builder()
            .setAnnotation(TO_ALLOCATE, entry)
            .setAnnotation(ALLOCATED, entry)
            .setAnnotation("hami.io/vgpu-node", NODE)
            .setAnnotation("hami.io/vgpu-time", "1")
            .setAnnotation("hami.io/bind-phase", "success")
            .setAnnotation("hami.io/bind-time", "1")
            .setLabel("hami.io/vgpu-node", NODE)
            .build());
    assertThat(cluster.bind(NS, "other", other.uid(), "", NODE).kind())
        .isEqualTo(dev.hamilock.bind.cluster.BindingPostResult.Kind.BOUND);

    List<BindResult> results =
        bindConcurrently(binder(cluster, binpack).rescoreUnderLock(rescore).build(), members);
    assertThat(results)
        .allSatisfy(r -> assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND));
    return Map.of(
        "bound", boundGpus(members), "snapshot", Set.of(snapshotGpu), "other", Set.of(otherGpu));
  }

  @Test
  void binpackPacksConcurrentlyFilteredGangMembersOntoTheFullerGpuSeenUnderTheLock()
      throws Exception {
    Map<String, Set<String>> run = binpackRun(PodBinder.Rescore.GANG_MEMBERS);

    assertThat(run.get("bound"))
        .as("every member on the card the other pod filled, the snapshot's card left free")
        .isEqualTo(run.get("other"));
  }

  @Test
  void withoutTheRescoreBinpackLeavesTwoCardsPartlyUsed() throws Exception {
    Map<String, Set<String>> run = binpackRun(PodBinder.Rescore.OFF);

    assertThat(run.get("bound"))
        .as("falsification: the snapshot's card")
        .isEqualTo(run.get("snapshot"));
  }

  // ------------------------------------------------------------------------------ scope and cost

  /**
   * Two pods outside a gang, filtered on one snapshot (both claim the same card), bound one after
   * the other: sources and cards of both, and the requests of both binds.
   */
  private record TwoPods(
      AllocationSource firstSource,
      AllocationSource secondSource,
      String firstGpu,
      String secondGpu,
      long requests) {}

  private TwoPods twoPodsRun(PodBinder.Rescore rescore) throws Exception {
    cluster.addNode(node(NODE, 2, A40_MIB));
    PodFitter spread = PodFitter.create(REGISTRY, "spread", "binpack");
    ExtenderFilter filter =
        ExtenderFilter.builder(cluster, REGISTRY).fitter(spread).writer(cluster).build();
    PodView first = cluster.addPod(Fixtures.pod("first", 1, 1000, 10)).view();
    PodView second = cluster.addPod(Fixtures.pod("second", 1, 1000, 10)).view();
    Map<String, NodeUsage> snapshot = filter.readUsage(List.of(NODE), Optional.empty());
    filter.annotate(first, filter.decide(first, snapshot.values()));
    filter.annotate(second, filter.decide(second, snapshot.values()));
    PodBinder binder = binder(cluster, spread).rescoreUnderLock(rescore).build();
    DevicePluginHandoff plugin = Fixtures.handoff(cluster);
    long before = totalRequests();

    BindResult r1 = binder.bind(NS, "first", "", NODE);
    long between = totalRequests();
    assertThat(plugin.allocateAll(NODE).status()).isEqualTo(HandoffResult.Status.COMPLETED);
    long resumed = totalRequests();
    BindResult r2 = binder.bind(NS, "second", "", NODE);

    assertThat(List.of(r1.outcome(), r2.outcome())).containsOnly(BindOutcome.BOUND);
    return new TwoPods(
        r1.allocationSource(),
        r2.allocationSource(),
        gpuOf("first"),
        gpuOf("second"),
        (between - before) + (totalRequests() - resumed));
  }

  private long totalRequests() {
    long n = 0;
    for (InMemoryCluster.Operation op : InMemoryCluster.Operation.values()) {
      n += cluster.operationCount(op);
    }
    return n;
  }

  @Test
  void podsOutsideAGangKeepTheFiltersChoiceByDefault() throws Exception {
    TwoPods t = twoPodsRun(PodBinder.Rescore.GANG_MEMBERS);

    assertThat(List.of(t.firstSource(), t.secondSource()))
        .containsOnly(AllocationSource.FILTER_KEPT);
    assertThat(t.secondGpu()).isEqualTo(t.firstGpu());
  }

  @Test
  void rescoringEveryPodSpreadsThemWithoutOneMoreReadButOneMoreWrite() throws Exception {
    TwoPods all = twoPodsRun(PodBinder.Rescore.ALL);
    RescoreUnderLockTest off = new RescoreUnderLockTest(); // a fresh cluster, the same steps
    long requestsWithoutRescore;
    try {
      requestsWithoutRescore = off.twoPodsRun(PodBinder.Rescore.OFF).requests();
    } finally {
      off.stop();
    }

    // the first bind sees the second pod's Filter claim on the shared card (HAMi counts in-flight
    // allocations) and spread moves it to the other card
    assertThat(all.firstSource()).isEqualTo(AllocationSource.RESCORED);
    assertThat(all.secondGpu()).isNotEqualTo(all.firstGpu());
    long rescored =
        List.of(all.firstSource(), all.secondSource()).stream()
            .filter(AllocationSource.RESCORED::equals)
            .count();
    assertThat(all.requests())
        .as(
            "the re-score uses the usage the under-lock re-fit read: no read more; the Filter's"
                + " allocation is written before those reads, so a pod re-scored to other cards"
                + " is written once more")
        .isEqualTo(requestsWithoutRescore + rescored);
  }
}
