package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.TestPod;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code hami-lock-doctor audit} on the API emulator, with real HAMi wire values: the Tesla T4
 * registration logged by HAMi's device plugin ({@code ../shared/fixtures/real-values.md}, "1× Tesla
 * T4, 7-field legacy form") and allocations in HAMi's {@code hami.io/vgpu-devices-allocated} form
 * ({@code UUID,NVIDIA,MiB,cores:} per device, {@code ;} after each container, init containers
 * first), as HAMi's scheduler writes them.
 */
class AuditTest {

  /** 1× Tesla T4, 15360 MiB, split count 10, 100 % (real-values.md, HAMi device-plugin log). */
  static final String T4_UUID = "GPU-9a3603f4-f66e-d48b-11ea-13e327064cca";

  static final String T4 = T4_UUID + ",10,15360,100,NVIDIA-Tesla T4,0,true:";

  /** A card published in real-values.md on another cluster (not registered here). */
  static final String OTHER_UUID = "GPU-9b9030a3-d81f-7d9f-5d2b-fd98cdc57b2d";

  static final String NS = "team-a";

  private ApiServerEmulator k8s;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
    k8s.createNamespace(NS);
  }

  @AfterEach
  void stop() {
    k8s.close();
  }

  /** A node registering the given HAMi NVIDIA value. */
  static void node(KubeBackend k8s, String name, String registration) {
    k8s.createNode(
        name,
        Map.of(
            "hami.io/node-nvidia-register",
            registration,
            "hami.io/node-handshake",
            "Reported 2024-11-10 11:05:48.756620661 +0000 UTC"));
  }

  /** One device entry of HAMi's allocation annotation: {@code UUID,NVIDIA,MiB,cores:}. */
  static String entry(String uuid, int mib, int cores) {
    return uuid + ",NVIDIA," + mib + "," + cores + ":";
  }

  /**
   * A Running pod bound to {@code node} as HAMi leaves it: one app container asking for one GPU,
   * {@code hami.io/vgpu-node} = {@code annotatedNode}, the given per-container allocation.
   */
  static TestPod hamiPod(String name, String node, String annotatedNode, String... containers) {
    return TestPod.named(NS, name)
        .schedulerName("hami-scheduler")
        .nodeName(node)
        .phase("Running")
        .annotation("hami.io/vgpu-node", annotatedNode)
        .annotation("hami.io/bind-phase", "success")
        .annotation("hami.io/vgpu-devices-allocated", String.join(";", containers) + ";")
        .container("cuda", "nvidia/cuda:12.4.1-base-ubuntu22.04")
        .limit("nvidia.com/gpu", "1");
  }

  private void create(TestPod pod) {
    k8s.create(pod.toJson());
  }

  private Fixtures.Run audit(String... more) {
    List<String> args = new java.util.ArrayList<>(List.of(more));
    args.add("audit");
    return Fixtures.run(k8s, Instant.now(), args.toArray(String[]::new));
  }

  @Test
  void twoPodsOf10000MiBOnOne15360MiBCardAreAMemoryOverCommit() throws Exception {
    node(k8s, "node-a", T4);
    create(hamiPod("a", "node-a", "node-a", entry(T4_UUID, 10000, 30)));
    create(hamiPod("b", "node-a", "node-a", entry(T4_UUID, 10000, 30)));

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
    assertThat(run.out())
        .contains("AU01")
        .contains("card " + T4_UUID)
        .contains("memory 20000/15360 MiB by team-a/a (10000 MiB, 30 %, 1 slot), team-a/b")
        .doesNotContain("slots ")
        .doesNotContain("cores ")
        .contains("audit: 1 error, 0 warnings, 0 info.");

    Fixtures.Run json = audit("--json");
    assertThat(json.exit()).isEqualTo(1);
    JsonNode root = new ObjectMapper().readTree(json.out());
    assertThat(root.path("command").asText()).isEqualTo("audit");
    assertThat(root.path("exit").asInt()).isEqualTo(1);
    assertThat(root.path("findings")).hasSize(1);
    JsonNode f = root.path("findings").get(0);
    assertThat(f.path("check").asText()).isEqualTo("AU01");
    assertThat(f.path("where").asText()).isEqualTo("Node node-a");
    assertThat(f.path("path").asText()).isEqualTo("card " + T4_UUID);
  }

  /**
   * Issue 23: a pod given {@code gpucores: 100} holds its card exclusively, and HAMi's Fit ({@code
   * pkg/device/nvidia/device.go}: {@code ExclusiveDeviceAllocateConflict} for a 100-core request on
   * a used card, {@code CardComputeUnitsExhausted} for a 0-core request on a card whose cores are
   * all used) never places another pod beside it. The allocations of such a pair (F-31's {@code
   * 24576,100} shape beside F-35's {@code 3072,0} shape, {@code ../shared/fixtures/real-values.md})
   * sum to 100 % of the cores, so a rule on sums alone does not see it.
   */
  @Test
  void issue23AnExclusiveCardSharedWithAZeroCorePodIsFound() {
    node(k8s, "node-a", T4);
    create(hamiPod("exclusive", "node-a", "node-a", entry(T4_UUID, 10000, 100)));
    create(hamiPod("zero-core", "node-a", "node-a", entry(T4_UUID, 3072, 0)));

    Fixtures.Run run = audit();

    assertThat(run.exit())
        .as("an exclusive (100 %%) card shared with a 0-core pod is a finding:%n%s", run.out())
        .isEqualTo(1);
    assertThat(run.out())
        .contains("AU01")
        .contains("card " + T4_UUID)
        .contains("exclusive (100 % cores) shared by 2 slots by team-a/exclusive")
        .contains("team-a/zero-core")
        .doesNotContain("memory ")
        .doesNotContain("cores 1");
  }

  /**
   * Issue 23: a registration listing one card twice is undecodable (the fit would give the card
   * twice): reported naming the UUID, its cards not audited, never a crash.
   */
  @Test
  void issue23ARegistrationListingOneCardTwiceIsReportedNamingTheCard() {
    node(k8s, "node-a", T4 + T4);

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
    assertThat(run.out())
        .contains("AU05")
        .contains("registration-undecodable")
        .contains("card " + T4_UUID + " registered twice");
  }

  @Test
  void moreSplitsThanTheCardsSplitCountAreASlotsOverCommit() {
    // the T4's registration with split count 2 instead of 10
    node(k8s, "node-a", T4.replace(",10,15360,", ",2,15360,"));
    for (String p : List.of("a", "b", "c")) {
      create(hamiPod(p, "node-a", "node-a", entry(T4_UUID, 1000, 10)));
    }

    Fixtures.Run run = audit();

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.out())
        .contains("AU01")
        .contains("slots 3/2 by team-a/a")
        .doesNotContain("memory ");
  }

  @Test
  void coresAbove100PercentAreACoresOverCommit() {
    node(k8s, "node-a", T4);
    for (String p : List.of("a", "b", "c")) {
      create(hamiPod(p, "node-a", "node-a", entry(T4_UUID, 3000, 40)));
    }

    Fixtures.Run run = audit();

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.out()).contains("AU01").contains("cores 120/100 % by").doesNotContain("memory ");
  }

  @Test
  void anAllocationNamingACardTheNodeDoesNotRegisterIsFound() {
    node(k8s, "node-a", T4);
    create(hamiPod("stale", "node-a", "node-a", entry(OTHER_UUID, 6144, 30)));

    Fixtures.Run run = audit();

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.out())
        .contains("AU03")
        .contains("Pod team-a/stale")
        .contains("allocation names card " + OTHER_UUID + ", which node node-a does not register");
  }

  @Test
  void aPodBoundToNodeBWhoseVgpuNodeSaysAIsFound() {
    node(k8s, "node-a", T4);
    node(k8s, "node-b", Fixtures.REGISTRATION);
    create(hamiPod("moved", "node-b", "node-a", entry(T4_UUID, 6144, 30)));

    // the library logs the mismatch at WARN (slf4j-simple writes to System.err at each call)
    PrintStream stderr = System.err;
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    Fixtures.Run run;
    try {
      System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
      run = audit();
    } finally {
      System.setErr(stderr);
    }

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.out())
        .contains("AU02")
        .contains("pod team-a/moved is bound to node node-b but hami.io/vgpu-node says node-a")
        .doesNotContain("AU03");
    assertThat(log.toString(StandardCharsets.UTF_8))
        .contains("WARN")
        .contains("pod team-a/moved is bound to node node-b");
  }

  @Test
  void aRunningGpuPodWithoutAllocationIsFoundAPendingOneIsNot() {
    node(k8s, "node-a", T4);
    create(
        TestPod.named(NS, "plain")
            .nodeName("node-a")
            .phase("Running")
            .container("cuda", "nvidia/cuda:12.4.1-base-ubuntu22.04")
            .limit("nvidia.com/gpu", "1"));
    create(
        TestPod.named(NS, "waiting")
            .schedulerName("hami-scheduler")
            .container("cuda", "nvidia/cuda:12.4.1-base-ubuntu22.04")
            .limit("nvidia.com/gpu", "1"));

    Fixtures.Run run = audit();

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.out())
        .contains("AU04")
        .contains("Pod team-a/plain")
        .contains("asking for nvidia.com/gpu without a HAMi allocation")
        .doesNotContain("team-a/waiting")
        .contains("audit: 1 error,");
  }

  /**
   * Issue 28: a pod whose {@code nvidia.com/gpu} kube-scheduler gave through DRA has no HAMi
   * allocation (the bind flow clears the Filter's): its ResourceClaim counts its card, so it is no
   * AU04 pod that gets whole cards nobody counts.
   */
  @Test
  void aRunningDraRoutePodIsNotAGpuPodWithoutAllocation() {
    node(k8s, "node-a", T4);
    var pod =
        TestPod.named(NS, "dra-route")
            .nodeName("node-a")
            .phase("Running")
            .container("cuda", "nvidia/cuda:12.4.1-base-ubuntu22.04")
            .limit("nvidia.com/gpu", "1")
            .toJson();
    pod.withObjectProperty("status")
        .putObject("extendedResourceClaimStatus")
        .put("resourceClaimName", "dra-route-extended-resources-x")
        .putArray("requestMappings")
        .addObject()
        .put("containerName", "cuda")
        .put("resourceName", "nvidia.com/gpu")
        .put("requestName", "container-0-request-0");
    k8s.create(pod);

    Fixtures.Run run = audit();

    assertThat(run.out()).doesNotContain("AU04").doesNotContain("team-a/dra-route");
    assertThat(run.exit()).isZero();
  }

  /**
   * Issue 23 item 5: a lock removed between the last confirmation and the Binding made the device
   * plugin serve the lock holder's allocation to another pod (the gang-bind property's {@code
   * SWAPPED_ALLOCATION}); the annotations still name each pod's own card, so only the bind phase
   * shows it.
   */
  @Test
  void aRunningPodTheDevicePluginNeverServedIsFound() {
    node(k8s, "node-a", T4);
    create(hamiPod("served", "node-a", "node-a", entry(T4_UUID, 4000, 30)));
    create(
        hamiPod("swapped", "node-a", "node-a", entry(T4_UUID, 4000, 30))
            .annotation("hami.io/bind-phase", "allocating"));
    create(
        hamiPod("pending", "node-a", "node-a", entry(T4_UUID, 4000, 30))
            .phase("Pending")
            .annotation("hami.io/bind-phase", "allocating"));

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
    assertThat(run.out())
        .contains("AU07")
        .contains("Pod team-a/swapped")
        .contains("hami.io/bind-phase=\"allocating\"")
        .doesNotContain("team-a/served ")
        .doesNotContain("Pod team-a/pending")
        .contains("audit: 1 error,");
  }

  @Test
  void aCleanClusterIsExit0AndFinishedPodsCountNothingAsInHami() {
    node(k8s, "node-a", T4);
    create(hamiPod("a", "node-a", "node-a", entry(T4_UUID, 6000, 30)));
    create(hamiPod("b", "node-a", "node-a", entry(T4_UUID, 6000, 30)));
    // Succeeded and Failed pods free their usage (HAMi's pod cache, spec §2.4 rule 32)
    create(hamiPod("done", "node-a", "node-a", entry(T4_UUID, 10000, 30)).phase("Succeeded"));
    create(hamiPod("crashed", "node-a", "node-a", entry(T4_UUID, 10000, 30)).phase("Failed"));

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(0);
    assertThat(run.out())
        .contains("audited 1 node(s), 1 card(s), 2 pod(s) with a HAMi allocation of 4 pod(s)")
        .contains("audit: 0 errors, 0 warnings, 0 info.");
    assertThat(run.err()).isEmpty();
  }

  @Test
  void aSidecarAndAnAppOverlappingBeyondTheCardAreFound() {
    node(k8s, "node-a", T4);
    // sidecar 8000 + app 8000: both run at once (Kubernetes' PodRequests), 16000 > 15360
    create(
        hamiPod(
                "with-sidecar",
                "node-a",
                "node-a",
                entry(T4_UUID, 8000, 20),
                entry(T4_UUID, 8000, 20))
            .sidecarContainer("log-shipper", "busybox")
            .limit("nvidia.com/gpu", "1"));

    Fixtures.Run run = audit();

    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.out())
        .contains("AU01")
        .contains("memory 16000/15360 MiB by team-a/with-sidecar (16000 MiB, 40 %, 2 slots)");
  }

  @Test
  void anInitContainerOnlyPeaksAndIsNotAddedToTheApp() {
    node(k8s, "node-a", T4);
    // init 8000 ends before the app's 8000 starts: the pod uses 8000 at its peak
    create(
        hamiPod("with-init", "node-a", "node-a", entry(T4_UUID, 8000, 20), entry(T4_UUID, 8000, 20))
            .initContainer("warm-up", "busybox")
            .limit("nvidia.com/gpu", "1"));
    create(hamiPod("other", "node-a", "node-a", entry(T4_UUID, 7000, 20)));

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out()).isEqualTo(0);
  }

  /**
   * c87db54 end to end, and its breaker: an exclusive app container (100 %) beside its own 0-core
   * sidecar on one card is found (HAMi's Fit refuses it in either order), and the finding names the
   * pod once with its whole share, not once per collapsed entry as if two pods held the card.
   */
  @Test
  void anExclusiveContainerBesideItsOwnSidecarIsFoundNamingThePodOnce() {
    node(k8s, "node-a", T4);
    create(
        hamiPod(
                "self-shared",
                "node-a",
                "node-a",
                entry(T4_UUID, 2000, 0),
                entry(T4_UUID, 10000, 100))
            .sidecarContainer("log-shipper", "busybox")
            .limit("nvidia.com/gpu", "1"));

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out()).isEqualTo(1);
    assertThat(run.out())
        .contains(
            "exclusive (100 % cores) shared by 2 slots by team-a/self-shared (12000 MiB, 100 %, 2"
                + " slots)\n",
            "fix: Recreate this pod: its own containers share the card")
        .doesNotContain("Delete one of these pods");
  }

  /**
   * Breaker (c87db54): an exclusive app container beside its own sidecar is collapsed to two
   * entries on one card (its own and the rest of the peak); a card the node does not register was
   * then reported twice for one pod, one AU03 per entry.
   */
  @Test
  void anExclusiveContainerBesideItsSidecarOnAnUnregisteredCardIsOneFinding() throws Exception {
    node(k8s, "node-a", T4);
    create(
        hamiPod(
                "stale-exclusive",
                "node-a",
                "node-a",
                entry(OTHER_UUID, 2000, 0),
                entry(OTHER_UUID, 10000, 100))
            .sidecarContainer("log-shipper", "busybox")
            .limit("nvidia.com/gpu", "1"));

    Fixtures.Run json = audit("--json");

    JsonNode findings = new ObjectMapper().readTree(json.out()).path("findings");
    assertThat(findings).as(json.out()).hasSize(1);
    assertThat(findings.get(0).path("check").asText()).isEqualTo("AU03");
  }

  /**
   * Breaker (c87db54): HAMi's padding drift (spec §7.25) wrote a pod [exclusive init container,
   * 0-core app on the same card, app without a GPU] as two entries. HAMi fitted the app on the card
   * after the init container (spec §5.9: each init container on its own copy of the usage), so the
   * two never run at once; which container each entry is cannot be told from the annotation, so the
   * entries are summed (never under), but the card is not reported as an exclusive container
   * shared: that would tell the operator to delete a pod HAMi placed rightly.
   */
  @Test
  void driftedEntriesOfAnExclusiveInitAndItsAppAreSummedButNotReportedShared() {
    node(k8s, "node-a", T4);
    create(
        hamiPod("drifted", "node-a", "node-a", entry(T4_UUID, 10000, 100), entry(T4_UUID, 2000, 0))
            .initContainer("warm-up", "busybox")
            .limit("nvidia.com/gpu", "1")
            .container("idle", "busybox"));

    Fixtures.Run run = audit();

    assertThat(run.exit()).as(run.out()).isEqualTo(0);
    assertThat(run.out()).doesNotContain("AU01");
  }

  @Test
  void podsThatCannotBeListedAreExit2NamingTheReadAndNoFindingIsClaimed() {
    node(k8s, "node-a", T4);
    create(hamiPod("a", "node-a", "node-a", entry(T4_UUID, 10000, 30)));
    create(hamiPod("b", "node-a", "node-a", entry(T4_UUID, 10000, 30)));
    k8s.addFault(
        FaultRule.matching()
            .verb("list")
            .resource("pods")
            .respondStatus(
                403,
                "Forbidden",
                "pods is forbidden: User \"auditor\" cannot list resource \"pods\" in API group"
                    + " \"\" at the cluster scope"));

    Fixtures.Run run = audit();

    assertThat(run.exit()).isEqualTo(2);
    assertThat(run.err())
        .contains(
            "cannot list pods in all namespaces: HTTP 403 Forbidden: pods is forbidden",
            "get/list on pods cluster-wide");
    assertThat(run.out()).contains("1 read(s) failed").doesNotContain("AU01");
    assertThat(run.err() + run.out()).doesNotContain("Exception", "\tat ");
  }
}
