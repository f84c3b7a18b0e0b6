package dev.hamilock.device.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerRole;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Registry rules, usage reconstruction (V76-V77, §7.19, §7.32). */
class RegistryAndUsageTest {
  static final FakeVendor GPU = new FakeVendor("FAKEGPU", "fake.example");
  static final VendorRegistry REG = VendorRegistry.builder().register(GPU).build();
  static final String ALLOC = GPU.allocatedAnnotationKey();

  static NodeView node(String name) {
    return NodeView.of(
        name,
        Map.of(
            GPU.registrationAnnotationKey(),
            "GPU0,10,40000,100,T,0,true:GPU1,10,40000,100,T,0,true:"));
  }

  static PodView pod(String name, String node, String alloc, int inits, int apps) {
    ContainerView c = new ContainerView("c", "", Map.of(), Map.of());
    return PodView.builder("ns", name)
        .uid("uid-" + name)
        .annotations(
            alloc == null
                ? Map.of(HamiAnnotations.VGPU_NODE, node)
                : Map.of(HamiAnnotations.VGPU_NODE, node, ALLOC, alloc))
        .initContainers(java.util.Collections.nCopies(inits, c))
        .containers(java.util.Collections.nCopies(apps, c))
        .build();
  }

  @Test
  void duplicateCommonWordNamesBothProviders() {
    class Other extends FakeVendor {
      Other() {
        super("FAKEGPU", "other.example");
      }
    }
    assertThatThrownBy(() -> VendorRegistry.builder().register(GPU).register(new Other()).build())
        .isInstanceOf(VendorRegistrationException.class)
        .hasMessageContaining("FAKEGPU")
        .hasMessageContaining(FakeVendor.class.getName())
        .hasMessageContaining(Other.class.getName());
  }

  @Test
  void overlappingResourceNamesRejected() {
    FakeVendor b = new FakeVendor("B", "fake.example");
    assertThatThrownBy(() -> VendorRegistry.builder().register(GPU).register(b).build())
        .isInstanceOf(VendorRegistrationException.class)
        .hasMessageContaining("fake.example/dev");
  }

  @Test
  void configurationAndLockKeys() {
    VendorConfig c = new VendorConfig(GPU.defaultConfig().resourceNames(), 512, 0, 1, 0);
    VendorRegistry r = VendorRegistry.builder().register(GPU).configure("FAKEGPU", c).build();
    assertThat(r.config("FAKEGPU").defaultMemory()).isEqualTo(512);
    assertThat(r.config("FAKEGPU").memoryFactor()).isEqualTo(1);
    assertThatThrownBy(() -> VendorRegistry.builder().configure("NOPE", c).build())
        .isInstanceOf(VendorRegistrationException.class)
        .hasMessageContaining("NOPE");
    ContainerView gpu =
        new ContainerView("g", "", Map.of("fake.example/dev", BigDecimal.ONE), Map.of());
    PodView initOnly = PodView.builder("ns", "p").initContainers(List.of(gpu)).build();
    PodView regular = PodView.builder("ns", "p").containers(List.of(gpu)).build();
    assertThat(r.lockKeys(initOnly)).as("§7.12 init-only pods never lock").isEmpty();
    assertThat(r.lockKeys(regular)).containsExactly("fake.example/lock");
    assertThatThrownBy(() -> VendorConfig.of(" ", null))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> new VendorConfig(VendorConfig.of("x", null).resourceNames(), 0, 101, 1, 1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** V76's collapse of a pod without sidecars: the first {@code initCount} containers are init. */
  private static List<ContainerDevice> collapse(List<List<ContainerDevice>> c, int initCount) {
    return UsageReconstructor.collapse(
        c, java.util.Collections.nCopies(initCount, ContainerRole.INIT));
  }

  @Test
  void v76_collapse() {
    ContainerDevice a = ContainerDevice.of("gpu0", "T", 100, 10);
    ContainerDevice b = ContainerDevice.of("gpu0", "T", 200, 20);
    assertThat(collapse(List.of(List.of(a), List.of(b)), 0))
        .containsExactly(new ContainerDevice(0, "gpu0", "T", 300, 30, 2));
    assertThat(collapse(List.of(List.of(a), List.of(ContainerDevice.of("gpu0", "T", 200, 30))), 2))
        .containsExactly(new ContainerDevice(0, "gpu0", "T", 200, 30, 1));
    assertThat(collapse(List.of(List.of(ContainerDevice.of("gpu0", "T", 500, 50)), List.of(a)), 1))
        .containsExactly(new ContainerDevice(0, "gpu0", "T", 500, 50, 1));
    assertThat(
            collapse(
                List.of(
                    List.of(ContainerDevice.of("gpu0", "T", 1000, 80)),
                    List.of(ContainerDevice.of("gpu0", "T", 200, 20))),
                1))
        .containsExactly(new ContainerDevice(0, "gpu0", "T", 1000, 80, 1));
    assertThat(
            collapse(
                List.of(List.of(a), List.of(b), List.of(ContainerDevice.of("gpu0", "T", 300, 30))),
                1))
        .containsExactly(new ContainerDevice(0, "gpu0", "T", 500, 50, 2));
  }

  /**
   * Issue 23 fault 2: each card's peak over Kubernetes' phases. gpu0: sidecar 100/10, init 2000/20,
   * sidecar 50/5, app 300/30 → init phase 2100/30 (2 slots), app phase 450/45 (3 slots); gpu1 only
   * the init container's 500/50 → its own phase, one slot.
   */
  @Test
  void collapseCountsSidecarsFromTheirStart() {
    List<List<ContainerDevice>> entries =
        List.of(
            List.of(ContainerDevice.of("gpu0", "T", 100, 10)),
            List.of(
                ContainerDevice.of("gpu0", "T", 2000, 20),
                ContainerDevice.of("gpu1", "T", 500, 50)),
            List.of(ContainerDevice.of("gpu0", "T", 50, 5)),
            List.of(ContainerDevice.of("gpu0", "T", 300, 30)));
    List<ContainerRole> roles =
        List.of(
            ContainerRole.SIDECAR, ContainerRole.INIT, ContainerRole.SIDECAR, ContainerRole.APP);
    assertThat(UsageReconstructor.collapse(entries, roles))
        .containsExactly(
            new ContainerDevice(0, "gpu0", "T", 2100, 45, 3),
            new ContainerDevice(0, "gpu1", "T", 500, 50, 1));
    assertThat(collapse(entries, 3))
        .as("the old aggregation: every init container at its peak")
        .containsExactly(
            new ContainerDevice(0, "gpu0", "T", 2000, 30, 1),
            new ContainerDevice(0, "gpu1", "T", 500, 50, 1));
  }

  @Test
  void v77_nodeUsage() {
    UsageReconstructor u = new UsageReconstructor(REG);
    NodeUsage one =
        u.nodeUsage(node("n"), List.of(pod("p", "n", "GPU0,T,20000,10:;GPU0,T,10000,5:;", 1, 1)));
    DeviceUsage g0 = one.devices().get(0);
    assertThat(List.of(g0.used(), g0.usedmem(), g0.usedcores())).containsExactly(1, 20000, 10);
    NodeUsage two =
        u.nodeUsage(node("n"), List.of(pod("p", "n", "GPU0,T,10000,5:;GPU0,T,10000,5:;", 0, 2)));
    assertThat(two.devices().get(0).used()).isEqualTo(2);
    assertThat(two.devices().get(1).used()).isZero();
  }

  /**
   * Issue 23: a pod holding 100 of a card's 100 cores in one container (HAMi's exclusive request)
   * beside any other pod is an over-commit whatever the sums: HAMi's Fit refuses the pair in both
   * orders ({@code pkg/device/nvidia/device.go}: {@code ExclusiveDeviceAllocateConflict}, {@code
   * CardComputeUnitsExhausted}). The sums of 100 % + 0 % stay within the card.
   */
  @Test
  void issue23AnExclusiveCardSharedWithAZeroCorePodIsOverCommitted() {
    UsageReconstructor u = new UsageReconstructor(REG);
    PodView exclusive = pod("x", "n", "GPU0,T,10000,100:;", 0, 1);
    PodView zeroCore = pod("z", "n", "GPU0,T,3000,0:;", 0, 1);
    assertThat(u.nodeUsage(node("n"), List.of(exclusive, zeroCore)).devices().get(0).overCommit())
        .containsExactly("exclusive (100 % cores) shared by 2 slots");
    assertThat(u.nodeUsage(node("n"), List.of(exclusive)).devices().get(0).overCommit()).isEmpty();
    PodView initExclusive = pod("i", "n", "GPU0,T,10000,100:;GPU0,T,1000,30:;", 1, 1);
    assertThat(
            u.nodeUsage(node("n"), List.of(initExclusive, zeroCore)).devices().get(0).overCommit())
        .as(
            "an init container's exclusive request counts for its pod's whole life, as HAMi's usage")
        .containsExactly("exclusive (100 % cores) shared by 2 slots");
    PodView twoHalves = pod("h", "n", "GPU0,T,1000,50:;GPU0,T,1000,50:;", 0, 2);
    assertThat(u.nodeUsage(node("n"), List.of(twoHalves, zeroCore)).devices().get(0).overCommit())
        .as("two containers of 50 %% are no exclusive request: HAMi fits them after a 0-core pod")
        .isEmpty();
  }

  /**
   * Found by the stop CI's falsification run (a scheduler that takes native sidecars for init
   * containers, GangBindOtherActorsProperties): a pod's exclusive app container (100 %) placed on
   * the card of its own 0-core sidecar. Both run at once, so the card is shared by an exclusive
   * request, but the pod's collapsed peak (100 %, 2 slots) looked like two halves and the audit
   * missed it. An exclusive container sharing a phase is now its own entry; one that runs alone in
   * its phase (an init container before the app on the same card) still collapses to one.
   */
  @Test
  void anExclusiveContainerBesideItsOwnSidecarIsReportedShared() {
    List<List<ContainerDevice>> entries =
        List.of(
            List.of(ContainerDevice.of("GPU0", "T", 2000, 0)),
            List.of(ContainerDevice.of("GPU0", "T", 10000, 100)));
    assertThat(
            UsageReconstructor.collapse(entries, List.of(ContainerRole.SIDECAR, ContainerRole.APP)))
        .containsExactly(
            new ContainerDevice(0, "GPU0", "T", 10000, 100, 1),
            new ContainerDevice(0, "GPU0", "T", 2000, 0, 1));
    DeviceUsage card =
        DeviceUsage.idle(
            new DeviceInfo("GPU0", 0, 10, 40000, 100, "T", 0, "", List.of(), true, "FAKEGPU"));
    for (ContainerDevice d :
        UsageReconstructor.collapse(entries, List.of(ContainerRole.SIDECAR, ContainerRole.APP))) {
      card = card.withAllocation(d);
    }
    assertThat(card.overCommit()).containsExactly("exclusive (100 % cores) shared by 2 slots");
    assertThat(collapse(entries, 1))
        .as("run one after the other: one entry, the exclusive one's peak")
        .containsExactly(new ContainerDevice(0, "GPU0", "T", 10000, 100, 1));
  }

  /**
   * Breaker (c87db54): with fewer entries than roles (padding drift, spec §7.25) the entries are
   * summed as app containers, but which of them ran at once is unknown: a pod [exclusive init on
   * GPU0, 0-core app on GPU0, app without a GPU] (HAMi fits the app after the init container) is
   * one summed entry, not an exclusive one the audit reports shared.
   */
  @Test
  void driftedEntriesAreSummedButNeverSplitIntoAnExclusiveOne() {
    List<List<ContainerDevice>> entries =
        List.of(
            List.of(ContainerDevice.of("GPU0", "T", 10000, 100)),
            List.of(ContainerDevice.of("GPU0", "T", 2000, 0)));
    assertThat(
            UsageReconstructor.collapse(
                entries, List.of(ContainerRole.INIT, ContainerRole.APP, ContainerRole.APP)))
        .containsExactly(new ContainerDevice(0, "GPU0", "T", 12000, 100, 2));
  }

  /**
   * Breaker: HAMi's padding drift (spec §7.25) writes a pod [no-GPU init, GPU app, GPU app] as two
   * entries, {@code A:;A:;}. Both app containers run at once, so the card carries 15000 + 15000
   * MiB; read by role, the first entry was the init container's and the card was counted 15000 (its
   * peak), and a 20000 MiB pod beside it went unnoticed over the card's 40000.
   */
  @Test
  void fewerEntriesThanContainersAreSummedNeverTakenForAnInitContainer() {
    UsageReconstructor u = new UsageReconstructor(REG);
    PodView drifted = pod("drifted", "n", "GPU0,T,15000,10:;GPU0,T,15000,10:;", 1, 2);
    DeviceUsage g0 = u.nodeUsage(node("n"), List.of(drifted)).devices().get(0);
    assertThat(List.of(g0.used(), g0.usedmem(), g0.usedcores())).containsExactly(2, 30000, 20);
    PodView beside = pod("beside", "n", "GPU0,T,20000,10:;", 0, 1);
    assertThat(u.nodeUsage(node("n"), List.of(drifted, beside)).devices().get(0).overCommit())
        .containsExactly("memory 50000/40000 MiB");
    PodView aligned = pod("aligned", "n", ";GPU0,T,15000,10:;GPU0,T,15000,10:;", 1, 2);
    assertThat(u.nodeUsage(node("n"), List.of(aligned)).devices().get(0).usedmem())
        .as("one entry per container: read by role as before")
        .isEqualTo(30000);
    PodView initPeak = pod("peak", "n", "GPU0,T,20000,10:;GPU0,T,10000,5:;", 1, 1);
    assertThat(u.nodeUsage(node("n"), List.of(initPeak)).devices().get(0).usedmem())
        .as("an init container's entry beside its own: still its peak")
        .isEqualTo(20000);
  }

  @Test
  void v77_badAnnotationFailsClosedNamingThePod() {
    UsageReconstructor u = new UsageReconstructor(REG);
    NodeUsage n =
        u.nodeUsage(
            node("n"),
            List.of(
                pod("bad", "n", "uuid,type,100:;", 0, 1),
                pod("good", "n", "GPU0,T,100,0:;", 0, 1)));
    assertThat(n.status()).isEqualTo(NodeUsage.Status.USAGE_UNKNOWN);
    assertThat(n.unavailableReason())
        .get()
        .asString()
        .contains("ns/bad")
        .contains(ALLOC)
        .contains("uuid,type,100");
    // other nodes unaffected
    assertThat(u.nodeUsage(node("m"), List.of(pod("bad", "n", "uuid,type,100:;", 0, 1))).status())
        .isEqualTo(NodeUsage.Status.READY);
  }

  @Test
  void phasesAndFiltering() {
    UsageReconstructor u = new UsageReconstructor(REG);
    String a = "GPU1,T,1000,10:;";
    PodView running = pod("r", "n", a, 0, 1).toBuilder().phase(PodView.Phase.RUNNING).build();
    PodView done = pod("s", "n", a, 0, 1).toBuilder().phase(PodView.Phase.SUCCEEDED).build();
    PodView failed = pod("f", "n", a, 0, 1).toBuilder().phase(PodView.Phase.FAILED).build();
    PodView terminating = pod("t", "n", a, 0, 1).toBuilder().deleting(true).build();
    PodView noNode = PodView.builder("ns", "x").annotations(Map.of(ALLOC, a)).build();
    PodView toAllocateOnly =
        PodView.builder("ns", "y")
            .annotations(Map.of(HamiAnnotations.VGPU_NODE, "n", GPU.toAllocateAnnotationKey(), a))
            .build();
    PodView stale = pod("st", "n", "GPU-GONE,T,1000,10:;", 0, 1);
    NodeUsage n =
        u.nodeUsage(
            node("n"), List.of(running, done, failed, terminating, noNode, toAllocateOnly, stale));
    assertThat(n.devices().get(1).used()).as("running + terminating").isEqualTo(2);
    assertThat(n.devices().get(1).usedmem()).isEqualTo(2000);
    assertThat(n.devices().get(0).used()).isZero();
  }

  @Test
  void unregisteredAndMalformedRegistration() {
    UsageReconstructor u = new UsageReconstructor(REG);
    assertThat(u.nodeUsage(NodeView.of("x", Map.of()), List.of()).unavailableReason())
        .contains("node unregistered");
    NodeUsage bad =
        u.registeredDevices(NodeView.of("y", Map.of(GPU.registrationAnnotationKey(), "garbage:")));
    assertThat(bad.status()).isEqualTo(NodeUsage.Status.UNREGISTERED);
    assertThat(bad.registrationErrors())
        .containsEntry("FAKEGPU", "malformed node annotation segment: \"garbage\"");
  }

  @Test
  void clusterUsageMatchesPerNode() {
    UsageReconstructor u = new UsageReconstructor(REG);
    List<PodView> pods =
        List.of(pod("a", "n1", "GPU0,T,100,1:;", 0, 1), pod("b", "n2", "GPU1,T,200,2:;", 0, 1));
    Map<String, NodeUsage> all = u.clusterUsage(List.of(node("n1"), node("n2")), pods);
    assertThat(all.get("n1").devices()).isEqualTo(u.nodeUsage(node("n1"), pods).devices());
    assertThat(all.get("n2").devices()).isEqualTo(u.nodeUsage(node("n2"), pods).devices());
    assertThat(all.get("n2").baseScore()).isGreaterThan(0);
  }
}
