package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.AllocationSource;
import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.testing.Scenario;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.reference.AllocateResult;
import dev.hamilock.reference.ContainerDevice;
import dev.hamilock.reference.HamiDevicePlugin;
import dev.hamilock.reference.HamiNodeLock;
import dev.hamilock.reference.HamiPodDevices;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.WriteRecord;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code PodBinder} wired by {@link KubernetesHamiStack} over HTTP: the HAMi-compatible annotations
 * it writes (accepted by the reference HAMi device plugin), ambiguous Bindings, and the bad-input
 * list of the bind-flow issue — each a typed result with no lock or half-written allocation left.
 */
class PodBinderOverHttpTest {
  static final String NS = "default";
  static final String NODE = "gpu-node-1";
  static final String GPU = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448";
  static final String TO_ALLOCATE = "hami.io/vgpu-devices-to-allocate";
  static final String ALLOCATED = "hami.io/vgpu-devices-allocated";
  static final String VGPU_NODE = "hami.io/vgpu-node";
  static final List<String> ALLOCATION_KEYS =
      List.of(
          TO_ALLOCATE,
          ALLOCATED,
          VGPU_NODE,
          "hami.io/vgpu-time",
          "hami.io/bind-phase",
          "hami.io/bind-time");

  /** 2024-08-01T06:00:00Z = Unix 1722492000 (spec §2.2 example). */
  static final Clock CLOCK = Clock.fixed(Instant.ofEpochSecond(1722492000L), ZoneOffset.UTC);

  private ApiServerEmulator k8s;
  private KubernetesHamiStack hami;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
    hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
            .clock(CLOCK)
            .retryPolicy(
                RetryPolicy.builder()
                    .pollInterval(Duration.ofMillis(5))
                    .retryTimeout(Duration.ofSeconds(5))
                    .build())
            .build();
  }

  @AfterEach
  void stop() {
    hami.close();
    k8s.close();
  }

  static NodeView gpuNode(String name, String... uuids) {
    List<Scenario.GpuSpec> gpus =
        java.util.Arrays.stream(uuids)
            .map(u -> new Scenario.GpuSpec(u, 24576, "NVIDIA A10"))
            .toList();
    return new Scenario.NodeSpec(name, gpus).toNodeView();
  }

  /**
   * The guide's gang member: {@code nvidia.com/gpu: 1}, {@code gpumem: 3000}, {@code gpucores: 30}.
   */
  static PodView guidePod(
      String name, Map<String, String> annotations, Map<String, String> labels) {
    return guidePod(name, annotations, labels, "gang-training", 30);
  }

  /** {@link #guidePod} in pod group {@code group}, asking {@code cores} % of a card's cores. */
  static PodView guidePod(
      String name,
      Map<String, String> annotations,
      Map<String, String> labels,
      String group,
      int cores) {
    Map<String, String> l = new HashMap<>(labels);
    l.put("scheduling.x-k8s.io/pod-group", group);
    return PodView.builder(NS, name)
        .labels(l)
        .annotations(annotations)
        .containers(
            List.of(
                new ContainerView(
                    "worker",
                    "ubuntu:22.04",
                    Map.of(
                        "nvidia.com/gpu",
                        BigDecimal.ONE,
                        "nvidia.com/gpumem",
                        BigDecimal.valueOf(3000),
                        "nvidia.com/gpucores",
                        BigDecimal.valueOf(cores)),
                    Map.of())))
        .build();
  }

  private String createGuidePod(String name) {
    return EmulatorObjects.pod(EmulatorObjects.createPod(k8s, guidePod(name, Map.of(), Map.of())))
        .view()
        .uid();
  }

  private void assertNothingLeft(String pod, String node) {
    assertThat(EmulatorObjects.lock(k8s, node)).as("lock on " + node).isNull();
    k8s.get("pods", NS, pod)
        .ifPresent(
            p -> {
              assertThat(EmulatorObjects.pod(p).isBound()).as("bound").isFalse();
              assertThat(EmulatorObjects.annotations(k8s, NS, pod))
                  .as("allocation annotations")
                  .doesNotContainKeys(ALLOCATION_KEYS.toArray(String[]::new));
              assertThat(EmulatorObjects.labels(k8s, NS, pod))
                  .as("labels")
                  .doesNotContainKey(VGPU_NODE);
            });
  }

  @Test
  void theBinderWritesHamisAnnotationsInOnePatchAndHamisPluginServesThem() throws Exception {
    EmulatorObjects.createNode(k8s, gpuNode(NODE, GPU));
    String uid = createGuidePod("gang-worker-1");

    BindResult r = hami.podBinder().bind(NS, "gang-worker-1", uid, NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.allocationSource()).isEqualTo(AllocationSource.REFITTED);
    assertThat(r.locksHeld()).isTrue();
    String entry = GPU + ",NVIDIA,3000,30:;";
    assertThat(EmulatorObjects.annotations(k8s, NS, "gang-worker-1"))
        .containsAllEntriesOf(
            Map.of(
                TO_ALLOCATE,
                entry,
                ALLOCATED,
                entry,
                VGPU_NODE,
                NODE,
                "hami.io/vgpu-time",
                "1722492000",
                "hami.io/bind-phase",
                "allocating",
                "hami.io/bind-time",
                "1722492000"));
    assertThat(EmulatorObjects.labels(k8s, NS, "gang-worker-1")).containsEntry(VGPU_NODE, NODE);
    List<WriteRecord> writes = k8s.history("pods", NS, "gang-worker-1");
    assertThat(writes)
        .extracting(w -> w.verb() + "/" + w.subresource())
        .containsExactly("seed/", "patch/", "create/binding");
    assertThat(EmulatorObjects.lock(k8s, NODE)).endsWith("," + NS + ",gang-worker-1");
    // HAMi's own decoder reads the allocation (it appends an empty trailing container)
    assertThat(HamiPodDevices.decode(entry).get(0))
        .containsExactly(new ContainerDevice(GPU, "NVIDIA", 3000, 30));

    HamiDevicePlugin plugin =
        new HamiDevicePlugin(
            k8s.newApiClient(Duration.ofSeconds(10)),
            HamiNodeLock.builder(k8s.newApiClient(Duration.ofSeconds(10))).build());
    AllocateResult a = plugin.allocate(NODE, List.of(1));

    assertThat(a.success()).as("HAMi's Allocate: %s", a.error()).isTrue();
    assertThat(a.pod().orElseThrow().getMetadata().getName()).isEqualTo("gang-worker-1");
    assertThat(a.containerDevices())
        .containsExactly(List.of(new ContainerDevice(GPU, "NVIDIA", 3000, 30)));
    assertThat(a.bindPhaseWritten()).contains("success");
    assertThat(EmulatorObjects.lock(k8s, NODE)).isNull();
    assertThat(EmulatorObjects.annotations(k8s, NS, "gang-worker-1"))
        .containsEntry("hami.io/bind-phase", "success")
        .containsEntry(ALLOCATED, entry);
  }

  @Test
  void aBindingAppliedWithoutAnswerIsFoundBoundByTheReread() throws Exception {
    EmulatorObjects.createNode(k8s, gpuNode(NODE, GPU));
    String uid = createGuidePod("p1");
    k8s.addFault(
        FaultRule.matching()
            .verb("create")
            .resource("pods/binding")
            .times(1)
            .dropResponseAfterApply());
    k8s.resetCounters();

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.locksHeld()).isTrue();
    assertThat(k8s.requestCount("create", "pods/binding")).isEqualTo(1);
    assertThat(EmulatorObjects.lock(k8s, NODE)).endsWith("," + NS + ",p1");
    assertThat(EmulatorObjects.annotations(k8s, NS, "p1"))
        .containsEntry("hami.io/bind-phase", "allocating");
    assertThat(hami.devicePluginHandoff("NVIDIA").allocateAll(NODE).handedOut())
        .singleElement()
        .satisfies(
            c ->
                assertThat(c.devices())
                    .singleElement()
                    .satisfies(d -> assertThat(d.uuid()).isEqualTo(GPU)));
    assertThat(EmulatorObjects.lock(k8s, NODE)).isNull();
  }

  @Test
  void aBindingLostWithoutAnswerIsCleanedUp() throws Exception {
    EmulatorObjects.createNode(k8s, gpuNode(NODE, GPU));
    String uid = createGuidePod("p1");
    k8s.addFault(
        FaultRule.matching().verb("create").resource("pods/binding").times(1).closeConnection());

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason()).contains("not applied");
    assertThat(r.locksHeld()).isFalse();
    assertNothingLeft("p1", NODE);
  }

  @Test
  void aPodDeletedBeforeItsBindingIsNotFoundAndReleasesTheLock() throws Exception {
    EmulatorObjects.createNode(k8s, gpuNode(NODE, GPU));
    String uid = createGuidePod("p1");
    k8s.addFault(
        FaultRule.matching()
            .verb("create")
            .resource("pods/binding")
            .times(1)
            .invoke(req -> k8s.delete("pods", NS, "p1")));

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.POD_NOT_FOUND);
    assertThat(r.locksHeld()).isFalse();
    assertThat(k8s.get("pods", NS, "p1")).isEmpty();
    assertNothingLeft("p1", NODE);
  }

  @Test
  void aPodRecreatedWhileItsAllocationIsWrittenIsNeverWrittenTo() throws Exception {
    EmulatorObjects.createNode(k8s, gpuNode(NODE, GPU));
    String uid = createGuidePod("p1");
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("pods")
            .times(1)
            .invoke(
                req -> {
                  k8s.delete("pods", NS, "p1");
                  EmulatorObjects.createPod(k8s, guidePod("p1", Map.of(), Map.of()));
                }));

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.POD_NOT_FOUND);
    assertThat(EmulatorObjects.pod(k8s.get("pods", NS, "p1").orElseThrow()).view().uid())
        .isNotEqualTo(uid);
    assertNothingLeft("p1", NODE);
  }

  @Test
  void aNodeDeletedAfterTheLockWasTakenIsNodeNotFoundAndTheFiltersChoiceIsCleared()
      throws Exception {
    EmulatorObjects.createNode(k8s, gpuNode(NODE, GPU));
    String uid = createGuidePod("p1");
    PodView pod = EmulatorObjects.readPod(k8s, NS, "p1");
    FilterDecision d = hami.extenderFilter().filter(pod, List.of(NODE));
    assertThat(d.node()).contains(NODE);
    assertThat(EmulatorObjects.annotations(k8s, NS, "p1"))
        .containsKey(ALLOCATED); // HAMi's Filter annotations
    k8s.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("nodes")
            .times(1)
            .invoke(req -> k8s.delete("nodes", null, NODE)));

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.NODE_NOT_FOUND);
    assertThat(r.locksHeld()).isFalse();
    assertThat(r.cleanupProblems()).isEmpty();
    assertThat(k8s.get("nodes", null, NODE)).isEmpty();
    assertNothingLeft("p1", NODE);
  }

  @Test
  void anotherPodsUndecodableAllocationMakesTheNodeFailClosed() throws Exception {
    EmulatorObjects.createNode(k8s, gpuNode(NODE, GPU));
    EmulatorObjects.createPod(
        k8s,
        guidePod(
            "bad",
            Map.of(VGPU_NODE, NODE, ALLOCATED, "not an allocation"),
            Map.of(VGPU_NODE, NODE)));
    String uid = createGuidePod("p1");

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(r.reason()).contains(NS + "/bad");
    assertThat(r.locksHeld()).isFalse();
    assertNothingLeft("p1", NODE);
    assertThat(EmulatorObjects.annotations(k8s, NS, "bad"))
        .containsEntry(ALLOCATED, "not an allocation");
  }

  @Test
  void thePodsOwnUndecodableAllocationIsReplacedByARefit() throws Exception {
    EmulatorObjects.createNode(k8s, gpuNode(NODE, GPU));
    EmulatorObjects.createPod(
        k8s,
        guidePod(
            "p1",
            Map.of(VGPU_NODE, NODE, ALLOCATED, "GPU-x,NVIDIA,notanumber"),
            Map.of(VGPU_NODE, NODE)));
    String uid = EmulatorObjects.readPod(k8s, NS, "p1").uid();

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.BOUND);
    assertThat(r.allocationSource()).isEqualTo(AllocationSource.REFITTED);
    assertThat(EmulatorObjects.annotations(k8s, NS, "p1"))
        .containsEntry(ALLOCATED, GPU + ",NVIDIA,3000,30:;");
  }

  @Test
  void aMalformedRegistrationIsATypedMisfit() throws Exception {
    EmulatorObjects.createNode(
        k8s, NodeView.of(NODE, Map.of("hami.io/node-nvidia-register", "{not json")));
    String uid = createGuidePod("p1");

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(r.reason()).contains("NVIDIA");
    assertNothingLeft("p1", NODE);
  }
}
