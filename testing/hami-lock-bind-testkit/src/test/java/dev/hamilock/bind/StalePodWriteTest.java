package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.ALLOCATED;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.REGISTRY;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.handoff;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.bind.memory.InMemoryCluster.Fault;
import dev.hamilock.bind.memory.InMemoryCluster.Operation;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Issue 23, found by a review outside the project's generators: a write onto a pod decided on an
 * earlier read landed whatever happened to the pod since — a stale Filter rewrote, and a retried
 * bind rewrote and then cleared, the allocation of a pod bound and served in between. The pod
 * writes now carry the read's {@code resourceVersion} ({@code
 * MetadataPatch#expectedResourceVersion}); both tests fail without it.
 */
class StalePodWriteTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  /**
   * A stale Filter of a pod (kube-scheduler re-queued it after its bind call timed out on the HTTP
   * side, HAMi#2645, while this extender's bind of the first attempt went on) checks that the pod
   * is neither bound nor served ({@code ExtenderFilter#alreadyAllocated}, one read), and then
   * patches its own allocation. When the first attempt's bind completes — re-fit under the lock,
   * Binding, the device plugin's hand-off — between that read and that patch, the patch replaces
   * the allocation of a bound, served pod with one never checked under the lock: the books then
   * count the pod on a card it does not run on, and not on the card it runs on.
   */
  @Test
  void aStaleFilterNeverRewritesTheAllocationOfAPodBoundBetweenItsCheckAndItsPatch()
      throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    ExtenderFilter filter =
        ExtenderFilter.builder(cluster, REGISTRY).writeAnnotations(cluster).build();
    String filterCard =
        filter
            .decide(p1, filter.readUsage(List.of("n1"), Optional.of(p1)).values())
            .devices()
            .orElseThrow()
            .forVendor("NVIDIA")
            .get(0)
            .get(0)
            .uuid();
    AtomicBoolean armed = new AtomicBoolean(true);
    AtomicReference<BindResult> bound = new AtomicReference<>();
    cluster.faults(
        (op, target) -> {
          if (op == Operation.PATCH_POD && armed.getAndSet(false)) {
            // another scheduler's pod lands on the Filter's card since the Filter's snapshot
            Fixtures.addServedPodOn(cluster, filterCard, 10000);
            // the first attempt's bind completes and the device plugin serves it
            bound.set(binder(cluster).build().bind(NS, "p1", p1.uid(), "n1"));
            assertThat(handoff(cluster).allocate("n1", List.of(1)).status())
                .isEqualTo(HandoffResult.Status.COMPLETED);
          }
          return Fault.NONE;
        });

    assertThat(filter.filter(p1, List.of("n1")).node()).contains("n1");

    assertThat(bound.get().outcome()).isEqualTo(BindOutcome.BOUND);
    String servedAllocation =
        PodDevicesCodec.encode(bound.get().devices().orElseThrow().forVendor("NVIDIA"));
    assertThat(servedAllocation).doesNotContain(filterCard);
    assertThat(annotations(cluster, "p1"))
        .as("the bound, served pod's allocation is the one its bind checked under the lock")
        .containsEntry(ALLOCATED, servedAllocation)
        .containsEntry("hami.io/bind-phase", "success");
    List<PodView> pods = new ArrayList<>();
    cluster.pods().forEach(p -> pods.add(p.view()));
    NodeUsage usage = new UsageReconstructor(REGISTRY).nodeUsage(cluster.nodes().get(0), pods);
    assertThat(usage.devices())
        .as("no card over-committed in the books")
        .allSatisfy(d -> assertThat(d.overCommit()).as(d.id()).isEmpty())
        .extracting(DeviceUsage::usedmem)
        .containsExactlyInAnyOrder(10000, 10000);
  }

  /**
   * kube-scheduler retries a bind whose HTTP call timed out while this extender's first call went
   * on (kubernetes#96579). The retry reads the pod unbound (its only bound check, {@code
   * PodBinder#run}) and takes the node lock; the first call then binds and the device plugin serves
   * it and releases the lock. The retry goes on under a lock it no longer holds: its re-fit (which
   * leaves the pod's own allocation out of the node's usage) chooses anew, its patch (conditioned
   * on the UID only) rewrites the served pod's allocation, its confirmation finds the lock lost
   * (CONTENDED), and its clean-up removes every allocation annotation of the bound, served pod
   * (seen on main: the pod's annotations end empty), so the books no longer count a running pod.
   * The retry must find the pod bound and leave its allocation alone.
   */
  @Test
  void aRetriedBindNeverRewritesTheAllocationOfThePodItsFirstCallBoundAndTheDevicePluginServed()
      throws Exception {
    cluster.addNode(node("n1", 2, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    AtomicBoolean armed = new AtomicBoolean(true);
    AtomicReference<BindResult> first = new AtomicReference<>();
    cluster.faults(
        (op, target) -> {
          if (op == Operation.READ_NODE && armed.getAndSet(false)) {
            // the retry holds the lock and is about to re-fit: the first call completes
            first.set(binder(cluster).build().bind(NS, "p1", p1.uid(), "n1"));
            assertThat(handoff(cluster).allocate("n1", List.of(1)).status())
                .isEqualTo(HandoffResult.Status.COMPLETED);
            String served = annotations(cluster, "p1").get(ALLOCATED);
            String card = served.substring(0, served.indexOf(','));
            // another pod then lands on the same card (its allocation fits: 20000 > 15360 only
            // if p1 is counted, which the retry's re-fit does not do)
            Fixtures.addServedPodOn(cluster, card, 5000);
          }
          return Fault.NONE;
        });

    BindResult retry = binder(cluster).build().bind(NS, "p1", p1.uid(), "n1");

    assertThat(first.get().outcome()).isEqualTo(BindOutcome.BOUND);
    String servedAllocation =
        PodDevicesCodec.encode(first.get().devices().orElseThrow().forVendor("NVIDIA"));
    assertThat(annotations(cluster, "p1"))
        .as("retry %s (%s): the served pod keeps its allocation", retry.outcome(), retry.reason())
        .containsEntry(ALLOCATED, servedAllocation)
        .containsEntry("hami.io/bind-phase", "success");
  }

  /**
   * The same retry (kubernetes#96579) landing while the first call holds the node lock, just before
   * its Binding: whatever the retry concludes (re-entry or contention), the first call's Binding
   * then succeeds, so the pod must end bound with its allocation and be served by the device plugin
   * — never bound with its allocation annotations removed by the retry's clean-up.
   */
  @Test
  void aRetriedBindDuringTheFirstCallsBindingLeavesThePodServable() throws Exception {
    cluster.addNode(node("n1", 1, 15360));
    PodView p1 = cluster.addPod(pod("p1", 1, 10000, 30)).view();
    AtomicBoolean armed = new AtomicBoolean(true);
    AtomicReference<BindResult> retry = new AtomicReference<>();
    cluster.faults(
        (op, target) -> {
          if (op == Operation.BIND && armed.getAndSet(false)) {
            retry.set(binder(cluster).build().bind(NS, "p1", p1.uid(), "n1"));
          }
          return Fault.NONE;
        });

    BindResult first = binder(cluster).build().bind(NS, "p1", p1.uid(), "n1");

    assertThat(cluster.pods().get(0).isBound()).isTrue();
    assertThat(annotations(cluster, "p1"))
        .as(
            "first %s (%s), retry %s (%s)",
            first.outcome(), first.reason(), retry.get().outcome(), retry.get().reason())
        .containsKeys(ALLOCATED, TO_ALLOCATE)
        .containsEntry("hami.io/vgpu-node", "n1");
    assertThat(handoff(cluster).allocate("n1", List.of(1)).status())
        .isEqualTo(HandoffResult.Status.COMPLETED);
  }
}
