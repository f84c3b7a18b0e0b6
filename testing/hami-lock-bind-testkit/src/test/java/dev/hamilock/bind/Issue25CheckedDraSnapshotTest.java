package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.locks;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static dev.hamilock.bind.Issue28DraUsageInFlowsTest.DRIVER;
import static dev.hamilock.bind.Issue28DraUsageInFlowsTest.slice;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 25, the re-fit's DRA objects from a snapshot that may lag ({@code readDraForFilter}), used
 * only once {@code DraObjects.unconfirmedClaim} finds every claim of the pod being bound and of the
 * node's pods in it, allocated and reserved for that pod (testing/realcluster/SCHEDULER.md, "What
 * the DRA reads must follow"). kube-scheduler writes a claim at PreBind, blind to HAMi's lock, so a
 * snapshot from before that write misses a card it gave away. Both interleavings, each with the
 * snapshot lagging (no claim in it) and the consistent read holding the claim:
 *
 * <ul>
 *   <li>(A) the pod being bound has its own claim on the card its Filter chose (written after the
 *       Filter, at its PreBind);
 *   <li>(B) a pod bound on the node before (partly DRA: HAMi's {@code hami.io/vgpu-node} and a
 *       claim) holds that card through its claim.
 * </ul>
 *
 * The snapshot lags so far that it shows no DRA on the node at all (a node whose snapshot shows a
 * slice or an allocated claim is read consistently, (C)). The bind must not take the card: it reads
 * the claims consistently and re-fits onto the other card. Falsified: with the pods' claim names
 * hidden from the check (so it confirms nothing it should), the snapshot is trusted and the card is
 * given twice.
 *
 * <p>(C) a claim no pod of the node names (a wholly DRA pod's, bound without the lock), stored long
 * before the bind but missing from a lagging snapshot that shows the node's slices: read
 * consistently, its card avoided.
 */
class Issue25CheckedDraSnapshotTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  /** An allocated claim on {@code device} of node gpu-1's pool, reserved for {@code uid}. */
  static ResourceClaimView claim(String name, String device, String uid) {
    return claim(name, device, uid, "gpu-1");
  }

  /** The same, its allocation's node selector naming {@code allocationNode} ("": another shape). */
  static ResourceClaimView claim(String name, String device, String uid, String allocationNode) {
    return new ResourceClaimView(
        NS,
        name,
        "uid-" + name,
        true,
        allocationNode,
        List.of(
            new ResourceClaimView.Result(
                DRIVER, "gpu-1", device, Optional.empty(), Map.of(), false)),
        Set.of(uid));
  }

  /** The in-memory cluster with a lagging DRA snapshot, counting consistent DRA reads. */
  static final class LaggingSnapshot extends ForwardingCluster {
    final DraObjects snapshot;
    final boolean claimNamesHidden;
    final AtomicInteger consistentReads = new AtomicInteger();
    final AtomicInteger podListsAtVersion = new AtomicInteger();
    final AtomicInteger podListsConsistent = new AtomicInteger();
    volatile boolean versionedListsUnavailable;
    volatile boolean firstWriteChangesNothing;

    LaggingSnapshot(InMemoryCluster cluster, DraObjects snapshot, boolean claimNamesHidden) {
      super(cluster, cluster);
      this.snapshot = snapshot;
      this.claimNamesHidden = claimNamesHidden;
    }

    @Override
    public DraObjects readDra(Collection<String> nodes) throws ClusterException {
      consistentReads.incrementAndGet();
      return super.readDra(nodes);
    }

    @Override
    public DraObjects readDraForFilter(Collection<String> nodes) {
      return snapshot;
    }

    @Override
    public List<ClusterPod> listPodsAssignedTo(
        String node, java.util.concurrent.Executor executor, String podVersion)
        throws ClusterException {
      podListsAtVersion.incrementAndGet();
      if (versionedListsUnavailable) { // kube-apiserver's 504 "Too large resource version"
        throw new ClusterException(
            ClusterException.Kind.UNAVAILABLE, "Too large resource version", null);
      }
      return listPodsAssignedTo(node);
    }

    @Override
    public List<ClusterPod> listPodsAssignedTo(String node, java.util.concurrent.Executor executor)
        throws ClusterException {
      podListsConsistent.incrementAndGet();
      return listPodsAssignedTo(node);
    }

    /** With {@link #firstWriteChangesNothing}: answers the first write as a no-op would. */
    @Override
    public ClusterPod patchPodMetadata(
        String namespace, String name, dev.hamilock.bind.cluster.MetadataPatch patch)
        throws ClusterException {
      if (firstWriteChangesNothing) {
        firstWriteChangesNothing = false;
        return super.readPod(namespace, name).orElseThrow(); // its version unchanged
      }
      return super.patchPodMetadata(namespace, name, patch);
    }

    @Override
    public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
      return super.readPod(namespace, name).map(this::hidden);
    }

    @Override
    public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
      return super.listPodsAssignedTo(node).stream().map(this::hidden).toList();
    }

    private ClusterPod hidden(ClusterPod p) {
      return claimNamesHidden
          ? new ClusterPod(
              p.view().toBuilder().resourceClaimNames(Set.of()).build(),
              p.nodeName(),
              p.resourceVersion())
          : p;
    }
  }

  /** Pod x, bound on gpu-1 before (HAMi's {@code hami.io/vgpu-node}), naming claim cx. */
  private PodView boundNamingClaimCx() {
    return cluster
        .addPod(
            PodView.builder(NS, "x")
                .annotations(Map.of(HamiAnnotations.VGPU_NODE, "gpu-1"))
                .phase(PodView.Phase.RUNNING)
                .resourceClaimNames(Set.of("cx"))
                .build(),
            Optional.of("gpu-1"))
        .view();
  }

  /** The index of the card the Filter chose for pod {@code name} on node gpu-1. */
  private int filtered(PodView p) {
    int card = filteredIndex(p);
    claimedCard = gpu("gpu-1", card);
    return card;
  }

  private int filteredIndex(PodView p) {
    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY)
            .writeAnnotations(cluster)
            .build()
            .filter(p, List.of("gpu-1"));
    assertThat(d.node()).as("%s", d).contains("gpu-1");
    String written = Fixtures.annotations(cluster, p.name()).toString();
    return written.contains(gpu("gpu-1", 0)) ? 0 : 1;
  }

  private BindResult bind(LaggingSnapshot reader, PodView p) {
    return PodBinder.builder(reader, reader, REGISTRY, locks(cluster))
        .clock(Fixtures.CLOCK)
        .retryPolicy(Fixtures.RETRY)
        .build()
        .bind(NS, p.name(), p.uid(), "gpu-1");
  }

  /** (A): the pod's own claim, written after its Filter, on the card the Filter chose. */
  private BindResult ownClaim(boolean claimNamesHidden) {
    cluster.addNode(node("gpu-1", 2, 15360));
    cluster.setDra(new DraObjects(List.of(slice("gpu-1", 2)), List.of()));
    PodView p =
        cluster
            .addPod(pod("p1", 1, 15360, 0).toBuilder().resourceClaimNames(Set.of("own")).build())
            .view();
    int card = filtered(p);
    cluster.setDra(
        new DraObjects(List.of(slice("gpu-1", 2)), List.of(claim("own", "gpu-" + card, p.uid()))));
    LaggingSnapshot reader = new LaggingSnapshot(cluster, DraObjects.NONE, claimNamesHidden);
    BindResult r = bind(reader, p);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    if (!claimNamesHidden) {
      assertThat(reader.consistentReads).as("the snapshot was not trusted").hasPositiveValue();
    }
    return r;
  }

  /** (B): a pod bound on the node before holds the Filter's card through its claim. */
  private BindResult othersClaim(boolean claimNamesHidden) {
    cluster.addNode(node("gpu-1", 2, 15360));
    cluster.setDra(new DraObjects(List.of(slice("gpu-1", 2)), List.of()));
    PodView p = cluster.addPod(pod("p1", 1, 15360, 0)).view();
    int card = filtered(p);
    PodView x = boundNamingClaimCx();
    cluster.setDra(
        new DraObjects(List.of(slice("gpu-1", 2)), List.of(claim("cx", "gpu-" + card, x.uid()))));
    LaggingSnapshot reader = new LaggingSnapshot(cluster, DraObjects.NONE, claimNamesHidden);
    BindResult r = bind(reader, p);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    if (!claimNamesHidden) {
      assertThat(reader.consistentReads).as("the snapshot was not trusted").hasPositiveValue();
    }
    return r;
  }

  private static String card(BindResult r) {
    return r.devices().orElseThrow().byVendor().values().iterator().next().get(0).get(0).uuid();
  }

  @Test
  void aClaimOfThePodBeingBoundMissingFromTheSnapshotIsReadConsistentlyAndItsCardAvoided() {
    BindResult r = ownClaim(false);

    assertThat(r.allocationSource()).isEqualTo(AllocationSource.REFITTED);
    assertThat(card(r)).as("not the card its own claim holds").isNotEqualTo(claimedCard);
  }

  @Test
  void aClaimOfAPodOnTheNodeMissingFromTheSnapshotIsReadConsistentlyAndItsCardAvoided() {
    BindResult r = othersClaim(false);

    assertThat(r.allocationSource()).isEqualTo(AllocationSource.REFITTED);
    assertThat(card(r)).as("not the card x's claim holds").isNotEqualTo(claimedCard);
  }

  @Test
  void withTheClaimNamesHiddenFromTheCheckTheSnapshotIsTrustedAndTheCardGivenTwice() {
    assertThat(card(ownClaim(true))).as("(A) falsified").isEqualTo(claimedCard);
    Issue25CheckedDraSnapshotTest other = new Issue25CheckedDraSnapshotTest();
    assertThat(card(other.othersClaim(true))).as("(B) falsified").isEqualTo(other.claimedCard);
  }

  /**
   * A snapshot holding the claim, confirmed, but not yet the slice that publishes its device: the
   * usage it gives is unknown (fail closed), so the claims are read consistently before the fit,
   * rather than the node refused.
   */
  @Test
  void aConfirmedClaimWhoseSliceTheSnapshotLacksIsResolvedFromAConsistentRead() {
    cluster.addNode(node("gpu-1", 2, 15360));
    cluster.setDra(new DraObjects(List.of(slice("gpu-1", 2)), List.of()));
    PodView p = cluster.addPod(pod("p1", 1, 15360, 0)).view();
    int card = filtered(p);
    PodView x = boundNamingClaimCx();
    // a node selector of another shape: the snapshot shows no DRA device on the node
    ResourceClaimView cx = claim("cx", "gpu-" + card, x.uid(), "");
    cluster.setDra(new DraObjects(List.of(slice("gpu-1", 2)), List.of(cx)));
    LaggingSnapshot reader =
        new LaggingSnapshot(cluster, new DraObjects(List.of(), List.of(cx)), false);

    BindResult r = bind(reader, p);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(reader.consistentReads).hasValue(1);
    assertThat(card(r)).isNotEqualTo(claimedCard);
  }

  @Test
  void aNodeWhoseSnapshotShowsDraDevicesIsReadConsistently() {
    cluster.addNode(node("gpu-1", 2, 15360));
    cluster.setDra(new DraObjects(List.of(slice("gpu-1", 2)), List.of()));
    PodView p = cluster.addPod(pod("p1", 1, 15360, 0)).view();
    int card = filtered(p);
    // a wholly DRA pod's claim: no pod HAMi lists names it
    cluster.setDra(
        new DraObjects(
            List.of(slice("gpu-1", 2)), List.of(claim("dra-only", "gpu-" + card, "uid-other"))));
    LaggingSnapshot reader =
        new LaggingSnapshot(cluster, new DraObjects(List.of(slice("gpu-1", 2)), List.of()), false);

    BindResult r = bind(reader, p);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(reader.consistentReads).hasValue(1);
    assertThat(card(r)).isNotEqualTo(claimedCard);
  }

  /** A filtered pod on an empty two-card node, and the reader to bind it through. */
  private LaggingSnapshot plain(PodView[] p) {
    cluster.addNode(node("gpu-1", 2, 15360));
    p[0] = cluster.addPod(pod("p1", 1, 15360, 0)).view();
    filtered(p[0]);
    return new LaggingSnapshot(cluster, DraObjects.NONE, false);
  }

  @Test
  void thePodListsAskForTheVersionOfTheWriteUnderTheLock() {
    PodView[] p = new PodView[1];
    LaggingSnapshot reader = plain(p);

    assertThat(bind(reader, p[0]).outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(reader.podListsAtVersion).hasValue(1);
    assertThat(reader.podListsConsistent).hasValue(0);
  }

  /** kube-apiserver answers a write that changes nothing with the pod's old version: no proof. */
  @Test
  void aFirstWriteThatChangedNothingListsThePodsConsistently() {
    PodView[] p = new PodView[1];
    LaggingSnapshot reader = plain(p);
    reader.firstWriteChangesNothing = true;

    assertThat(bind(reader, p[0]).outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(reader.podListsAtVersion).hasValue(0);
    assertThat(reader.podListsConsistent).hasValue(1);
  }

  @Test
  void aListAtTheVersionAnsweredUnavailableFallsBackToAConsistentList() {
    PodView[] p = new PodView[1];
    LaggingSnapshot reader = plain(p);
    reader.versionedListsUnavailable = true;

    BindResult r = bind(reader, p[0]);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(reader.podListsAtVersion).hasValue(1);
    assertThat(reader.podListsConsistent).hasValue(1);
  }

  /** The card the claim of the last scenario holds. */
  private String claimedCard;
}
