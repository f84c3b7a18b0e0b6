package dev.hamilock.device.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * DRA allocations counted as usage (issue 28 item 1) on the fixtures of {@code
 * src/test/resources/dra} (their sources are in its README): node {@code gpu-node-1} registers two
 * A10 cards of 23028 MiB and 100 cores with HAMi, and the same cards appear in the slices of HAMi's
 * and NVIDIA's DRA drivers.
 */
class DraUsageTest {
  static final String A = "GPU-6f1f2d7a-8c3e-4b9e-9a51-0c2f6a3d7e11";
  static final String B = "GPU-b3c24e1f-57d9-4e8a-8f60-9d1c2a4b5f22";
  static final VendorRegistry REG = VendorRegistry.builder().register(new NvidiaVendor()).build();
  static final UsageReconstructor USAGE = new UsageReconstructor(REG);

  static NodeView node(String... uuids) {
    StringBuilder reg = new StringBuilder();
    for (String u : uuids) {
      reg.append(u).append(",10,23028,100,NVIDIA-NVIDIA A10,0,true:");
    }
    return NodeView.of("gpu-node-1", Map.of(NvidiaAnnotations.REGISTER, reg.toString()));
  }

  static final NodeView NODE = node(A, B);

  static ObjectNode json(String name) throws Exception {
    try (InputStream in = DraUsageTest.class.getResourceAsStream("/dra/" + name)) {
      return (ObjectNode) JsonViews.readObject(in.readAllBytes());
    }
  }

  static ResourceSliceView slice(JsonNode n) throws Exception {
    return JsonViews.resourceSliceView(n);
  }

  static ResourceClaimView claim(JsonNode n) throws Exception {
    return JsonViews.resourceClaimView(n);
  }

  static DraObjects dra(List<ResourceClaimView> claims) throws Exception {
    return new DraObjects(
        List.of(slice(json("slice-hami.json")), slice(json("slice-nvidia.json"))), claims);
  }

  static NodeUsage withClaims(String... files) throws Exception {
    List<ResourceClaimView> claims = new ArrayList<>();
    for (String f : files) {
      claims.add(claim(json(f)));
    }
    return USAGE.nodeUsage(NODE, List.of(), dra(claims));
  }

  /** A running HAMi pod on gpu-node-1 whose allocated annotation gives each container one entry. */
  static PodView hamiPod(String name, List<List<ContainerDevice>> containers) {
    Map<String, String> a =
        new HashMap<>(REG.vendor("NVIDIA").orElseThrow().encodeAllocation(containers));
    a.put(HamiAnnotations.VGPU_NODE, "gpu-node-1");
    List<dev.hamilock.device.spi.view.ContainerView> cs = new ArrayList<>();
    for (int i = 0; i < containers.size(); i++) {
      cs.add(Nv.container("c" + i, Map.of(), Map.of()));
    }
    return PodView.builder("default", name)
        .annotations(a)
        .containers(cs)
        .nodeName("gpu-node-1")
        .phase(PodView.Phase.RUNNING)
        .build();
  }

  static NodeUsage withPod(List<List<ContainerDevice>> containers) {
    return USAGE.nodeUsage(NODE, List.of(hamiPod("p", containers)));
  }

  static DeviceUsage row(NodeUsage u, String uuid) {
    return u.devices().get(u.positionOf(uuid));
  }

  /**
   * Issue 25's checked snapshot on kube-scheduler-shaped claims: the shared claim is allocated and
   * reserved for {@code double-gpu-pod}, which confirms it; a claim not reserved yet (exclusive
   * fixture) or another pod's uid does not.
   */
  @Test
  void theFixturesConfirmOnlyTheClaimReservedForThePod() throws Exception {
    String uid = "e0f1a2b3-c4d5-4e6f-8a7b-9c0d1e2f3a4b"; // claim-shared.json status.reservedFor
    DraObjects snapshot =
        dra(List.of(claim(json("claim-shared.json")), claim(json("claim-nvidia-exclusive.json"))));
    assertThat(snapshot.claims().get(0).reservedFor()).containsExactly(uid);
    PodView pod =
        PodView.builder("default", "double-gpu-pod")
            .uid(uid)
            .resourceClaimNames(Set.of("double-gpu-0"))
            .build();
    assertThat(snapshot.unconfirmedClaim(List.of(pod))).isEmpty();
    assertThat(snapshot.unconfirmedClaim(List.of(pod.toBuilder().uid("other-uid").build())))
        .hasValueSatisfying(why -> assertThat(why).contains("default/double-gpu-0"));
    PodView user =
        PodView.builder("ml", "p").uid(uid).resourceClaimNames(Set.of("single-gpu")).build();
    assertThat(snapshot.claims().get(1).allocated()).isTrue();
    assertThat(snapshot.unconfirmedClaim(List.of(user)))
        .hasValueSatisfying(why -> assertThat(why).contains("ml/single-gpu", "not reserved"));
  }

  @Test
  void sharesCountTheirConsumedCapacityLikeAHamiPodWithTheSameShares() throws Exception {
    NodeUsage u = withClaims("claim-shared.json");
    assertThat(u.status()).isEqualTo(NodeUsage.Status.READY);
    assertThat(row(u, A).used()).isEqualTo(2);
    assertThat(row(u, A).usedmem()).as("4Gi + 8Gi in MiB").isEqualTo(4096 + 8192);
    assertThat(row(u, A).usedcores()).isEqualTo(30 + 60);
    assertThat(row(u, B).used()).isZero();
    NodeUsage pod =
        withPod(
            List.of(
                List.of(ContainerDevice.of(A, "NVIDIA", 4096, 30)),
                List.of(ContainerDevice.of(A, "NVIDIA", 8192, 60))));
    assertThat(u.devices()).isEqualTo(pod.devices());
  }

  @Test
  void exclusiveDeviceTakesTheWholeCardLikeAnExclusiveHamiPod() throws Exception {
    NodeUsage u = withClaims("claim-nvidia-exclusive.json");
    assertThat(row(u, A).usedmem()).isEqualTo(23028);
    assertThat(row(u, A).usedcores()).isEqualTo(100);
    assertThat(u.devices())
        .isEqualTo(
            withPod(List.of(List.of(ContainerDevice.of(A, "NVIDIA", 23028, 100)))).devices());
  }

  @Test
  void migDeviceTakesItsParentCard() throws Exception {
    NodeUsage u = withClaims("claim-nvidia-mig.json");
    assertThat(row(u, B).usedmem())
        .as("the whole parent card, not the 5952Mi slice")
        .isEqualTo(23028);
    assertThat(row(u, B).usedcores()).isEqualTo(100);
    assertThat(row(u, A).used()).isZero();
  }

  @Test
  void extendedResourceClaimOnHamisClassTakesTheWholeCardByItsDefaults() throws Exception {
    NodeUsage u = withClaims("claim-extended.json");
    assertThat(row(u, B).used()).isEqualTo(1);
    assertThat(row(u, B).usedmem()).isEqualTo(23028);
    assertThat(row(u, B).usedcores()).isEqualTo(100);
  }

  @Test
  void aDraRoutePodThatKeptHamisAllocationIsCountedOnceAsItsClaim() throws Exception {
    // claim-extended.json: kube-scheduler's claim for a pod's nvidia.com/gpu, card B whole; the pod
    // still carries the allocation HAMi's Filter wrote for it (1000 MiB of B)
    PodView both =
        hamiPod("p", List.of(List.of(ContainerDevice.of(B, "NVIDIA", 1000, 10)))).toBuilder()
            .draResources(Set.of("nvidia.com/gpu"))
            .build();
    DraObjects claims = dra(List.of(claim(json("claim-extended.json"))));

    NodeUsage u = USAGE.nodeUsage(NODE, List.of(both), claims);

    assertThat(row(u, B).used()).as("one slot: the claim's").isEqualTo(1);
    assertThat(row(u, B).usedmem()).isEqualTo(23028);
    assertThat(u.devices()).isEqualTo(withClaims("claim-extended.json").devices());
    assertThat(USAGE.clusterUsage(List.of(NODE), List.of(both), claims).get(NODE.name()).devices())
        .isEqualTo(u.devices());
    // another resource went the DRA route: the HAMi allocation is the pod's, and counts
    PodView nic = both.toBuilder().draResources(Set.of("example.com/nic")).build();
    assertThat(row(USAGE.nodeUsage(NODE, List.of(nic), DraObjects.NONE), B).usedmem())
        .isEqualTo(1000);
  }

  @Test
  void theSameShareOrCardNamedTwiceCountsOnce() throws Exception {
    assertThat(withClaims("claim-shared.json", "claim-shared.json").devices())
        .isEqualTo(withClaims("claim-shared.json").devices());
    // NVIDIA's gpu-0 and HAMi's hami-gpu-0 are one card: taken whole once
    ObjectNode hamiWhole = json("claim-nvidia-exclusive.json");
    ObjectNode r = (ObjectNode) hamiWhole.at("/status/allocation/devices/results/0");
    r.put("driver", "hami-core-gpu.project-hami.io").put("device", "hami-gpu-0");
    hamiWhole.withObjectProperty("metadata").put("name", "other");
    NodeUsage both =
        USAGE.nodeUsage(
            NODE,
            List.of(),
            dra(List.of(claim(hamiWhole), claim(json("claim-nvidia-exclusive.json")))));
    assertThat(both.devices()).isEqualTo(withClaims("claim-nvidia-exclusive.json").devices());
  }

  @Test
  void sharedMemoryRoundsUpToMiBAndCoresFollowMemoryWhenTheDriverHasNone() throws Exception {
    ObjectNode c = json("claim-nvidia-exclusive.json");
    ObjectNode r = (ObjectNode) c.at("/status/allocation/devices/results/0");
    r.put("shareID", "d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6");
    r.putObject("consumedCapacity").put("memory", String.valueOf(6L * 1024 * 1024 * 1024 + 1));
    NodeUsage u = USAGE.nodeUsage(NODE, List.of(), dra(List.of(claim(c))));
    assertThat(row(u, A).usedmem()).as("6 GiB + 1 byte rounds up").isEqualTo(6145);
    assertThat(row(u, A).usedcores()).as("ceil(6145 * 100 / 23028)").isEqualTo(27);
    assertThat(row(u, A).used()).isEqualTo(1);
  }

  @Test
  void unresolvableDeviceMakesTheNodeSuspectNeverFree() throws Exception {
    ObjectNode unknownDevice = json("claim-extended.json");
    ((ObjectNode) unknownDevice.at("/status/allocation/devices/results/0"))
        .put("device", "hami-gpu-7");
    NodeUsage u = USAGE.nodeUsage(NODE, List.of(), dra(List.of(claim(unknownDevice))));
    assertThat(u.status()).isEqualTo(NodeUsage.Status.USAGE_UNKNOWN);
    assertThat(u.unavailableReason().orElseThrow())
        .contains("default/cuda-pod-extended-resources-8kq2n")
        .contains("hami-core-gpu.project-hami.io/gpu-node-1/hami-gpu-7")
        .contains("no current ResourceSlice");
    ((ObjectNode) unknownDevice.at("/status/allocation")).remove("nodeSelector");
    assertThat(USAGE.nodeUsage(NODE, List.of(), dra(List.of(claim(unknownDevice)))).status())
        .as("without a node selector the pool names the node")
        .isEqualTo(NodeUsage.Status.USAGE_UNKNOWN);

    NodeUsage unregistered =
        USAGE.nodeUsage(node(A), List.of(), dra(List.of(claim(json("claim-extended.json")))));
    assertThat(unregistered.unavailableReason().orElseThrow())
        .contains("card " + B + " is not registered");

    ObjectNode noUuid = json("slice-hami.json");
    ((ObjectNode) noUuid.at("/spec/devices/1/attributes")).remove("uuid");
    NodeUsage missing =
        USAGE.nodeUsage(
            NODE,
            List.of(),
            new DraObjects(List.of(slice(noUuid)), List.of(claim(json("claim-extended.json")))));
    assertThat(missing.unavailableReason().orElseThrow()).contains("no uuid attribute");

    PodView pod =
        PodView.builder("default", "small")
            .containers(
                List.of(
                    Nv.container(
                        "c", Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "100"), Map.of())))
            .build();
    assertThat(PodFitter.create(REG).fit(pod, u).fits()).isFalse();
  }

  @Test
  void claimsElsewhereAdminAccessOtherDriversAndUnallocatedClaimsCountNothing() throws Exception {
    List<DeviceUsage> idle = USAGE.nodeUsage(NODE, List.of()).devices();
    ObjectNode elsewhere = json("claim-nvidia-exclusive.json");
    ((ObjectNode) elsewhere.at("/status/allocation/devices/results/0")).put("pool", "gpu-node-2");
    ((com.fasterxml.jackson.databind.node.ArrayNode)
            elsewhere.at(
                "/status/allocation/nodeSelector/nodeSelectorTerms/0/matchFields/0/values"))
        .set(0, "gpu-node-2");
    ObjectNode admin = json("claim-nvidia-exclusive.json");
    ((ObjectNode) admin.at("/status/allocation/devices/results/0")).put("adminAccess", true);
    ObjectNode nic = json("claim-nvidia-exclusive.json");
    ((ObjectNode) nic.at("/status/allocation/devices/results/0"))
        .put("driver", "sriovnetwork.k8snetworkplumbingwg.io");
    ObjectNode pending = json("claim-nvidia-exclusive.json");
    ((ObjectNode) pending.get("status")).remove("allocation");
    for (ObjectNode c : List.of(elsewhere, admin, nic, pending)) {
      NodeUsage u = USAGE.nodeUsage(NODE, List.of(), dra(List.of(claim(c))));
      assertThat(u.status()).as(c.toString()).isEqualTo(NodeUsage.Status.READY);
      assertThat(u.devices()).as(c.toString()).isEqualTo(idle);
    }
  }

  @Test
  void onlyThePoolsHighestGenerationMapsDevices() throws Exception {
    ObjectNode stale = json("slice-hami.json");
    stale.withObjectProperty("metadata").put("name", "stale");
    ((ObjectNode) stale.at("/spec/pool")).put("generation", 0);
    ((ObjectNode) stale.at("/spec/devices/1/attributes/uuid")).put("string", "GPU-gone");
    NodeUsage u =
        USAGE.nodeUsage(
            NODE,
            List.of(),
            new DraObjects(
                List.of(slice(stale), slice(json("slice-hami.json"))),
                List.of(claim(json("claim-extended.json")))));
    assertThat(u.status()).isEqualTo(NodeUsage.Status.READY);
    assertThat(row(u, B).usedmem()).isEqualTo(23028);
  }

  @Test
  void aPodThatFitsBesideHamiPodsNoLongerFitsBesideAClaim() throws Exception {
    PodView pod =
        PodView.builder("default", "big")
            .containers(
                List.of(
                    Nv.container(
                        "c",
                        Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "16000"),
                        Map.of())))
            .build();
    PodFitter fitter = PodFitter.create(REG);
    assertThat(fitter.fit(pod, USAGE.nodeUsage(NODE, List.of())).fits()).isTrue();
    NodeUsage u = withClaims("claim-shared.json", "claim-nvidia-mig.json");
    assertThat(fitter.fit(pod, u).fits()).as("A has 23028 - 12288 MiB left, B is taken").isFalse();
    assertThat(
            USAGE
                .clusterUsage(
                    List.of(NODE),
                    List.of(),
                    dra(
                        List.of(
                            claim(json("claim-shared.json")),
                            claim(json("claim-nvidia-mig.json")))))
                .get("gpu-node-1")
                .devices())
        .isEqualTo(u.devices());
  }
}
