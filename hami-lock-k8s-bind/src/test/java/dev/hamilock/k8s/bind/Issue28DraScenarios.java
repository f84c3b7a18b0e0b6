package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.KubeBackend;
import io.kubernetes.client.openapi.ApiClient;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 28 item 4, the mixed node, shared, MIG, deallocated and unknown devices, on a server that
 * serves {@code resource.k8s.io/v1} (no DRA driver: the ResourceSlice and the claims' allocation
 * status are written by hand): a card a ResourceClaim took is not offered by the extender's Filter,
 * and a claim allocated between the Filter and the lock is caught by the re-fit. Runs on the
 * emulator ({@link Issue28EmulatorDraTest}) and on the real kube-apiserver v1.37 ({@link
 * Issue28RealDraTest}).
 */
abstract class Issue28DraScenarios {
  static final String NODE = "dra-node";
  static final String CARD_A = "GPU-aaaaaaaa-0000-0000-0000-000000000000";
  static final String CARD_B = "GPU-bbbbbbbb-0000-0000-0000-000000000000";
  static final String DRA = "/apis/resource.k8s.io/v1";

  private KubeBackend k8s;
  private ApiClient admin;
  private KubernetesHamiStack hami;

  /**
   * @return a fresh backend serving resource.k8s.io/v1, closed after the test
   */
  abstract KubeBackend start();

  @BeforeEach
  void startBackend() {
    k8s = start();
    admin = k8s.newApiClient(Duration.ofSeconds(30));
    hami = KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(30))).build();
  }

  private void send(String method, String path, String json) throws IOException {
    Request r =
        new Request.Builder()
            .url(admin.getBasePath() + path)
            .method(
                method,
                RequestBody.create(
                    json.replace('\'', '"'),
                    MediaType.get(
                        method.equals("PATCH")
                            ? "application/merge-patch+json"
                            : "application/json")))
            .build();
    try (Response resp = admin.getHttpClient().newCall(r).execute()) {
      assertThat(resp.code()).as("%s %s: %s", method, path, resp.body().string()).isLessThan(300);
    }
  }

  /** NVIDIA's DRA driver's slice of the node: gpu-0 is card A, gpu-1 card B. */
  private void createSlice() throws IOException {
    send(
        "POST",
        DRA + "/resourceslices",
        "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':{'name':'dra-node-gpu'},"
            + "'spec':{'driver':'gpu.nvidia.com','nodeName':'"
            + NODE
            + "','pool':{'name':'"
            + NODE
            + "','generation':1,'resourceSliceCount':1},'devices':["
            + "{'name':'gpu-0','attributes':{'uuid':{'string':'"
            + CARD_A
            + "'}}},{'name':'gpu-1','attributes':{'uuid':{'string':'"
            + CARD_B
            + "'}}}]}}");
  }

  /** A claim for one GPU, allocated (status written by hand) to {@code device} on the node. */
  private void allocatedClaim(String name, String device) throws IOException {
    claim(name, "'driver':'gpu.nvidia.com','pool':'" + NODE + "','device':'" + device + "'");
  }

  /** A claim allocated (status written by hand) with one result: {@code result}'s fields. */
  private void claim(String name, String result) throws IOException {
    String meta = "'metadata':{'name':'" + name + "','namespace':'default'}";
    String spec =
        "'spec':{'devices':{'requests':[{'name':'gpu','exactly':{'deviceClassName':"
            + "'gpu.nvidia.com','allocationMode':'ExactCount','count':1}}]}}";
    send(
        "POST",
        DRA + "/namespaces/default/resourceclaims",
        "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceClaim'," + meta + "," + spec + "}");
    send(
        "PATCH",
        DRA + "/namespaces/default/resourceclaims/" + name + "/status",
        "{'status':{'allocation':{'devices':{'results':[{'request':'gpu',"
            + result
            + "}]},'nodeSelector':{'nodeSelectorTerms':[{'matchFields':[{'key':"
            + "'metadata.name','operator':'In','values':['"
            + NODE
            + "']}]}]}}}}");
  }

  /** The guide's pod {@code p1}: 3000 MiB and 30 % of one card. */
  private PodView createP1() {
    return EmulatorObjects.pod(
            EmulatorObjects.createPod(
                k8s, PodBinderOverHttpTest.guidePod("p1", Map.of(), Map.of()), "default"))
        .view();
  }

  /**
   * HAMi's DRA driver shares card A by {@code shareID} (two shares of 11Gi and 40 % and a second
   * result naming the first share again, counted once); NVIDIA's driver gave card B whole as a MIG
   * device ({@code parentUUID}). Then: nothing is left for 3000 MiB and 30 %; one share deallocated
   * frees card A again; a claim on a device no slice publishes makes the node suspect.
   */
  @Test
  void sharesPairsMigDeallocationAndAnUnknownDevice() throws Exception {
    EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(NODE, CARD_A, CARD_B));
    send(
        "POST",
        DRA + "/resourceslices",
        "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':{'name':'dra-hami'},"
            + "'spec':{'driver':'hami-core-gpu.project-hami.io','nodeName':'"
            + NODE
            + "','pool':{'name':'"
            + NODE
            + "','generation':1,'resourceSliceCount':1},'devices':[{'name':'hami-gpu-0',"
            + "'allowMultipleAllocations':true,'attributes':{'uuid':{'string':'"
            + CARD_A
            + "'}},'capacity':{'memory':{'value':'24Gi'},'cores':{'value':'100'}}}]}}");
    send(
        "POST",
        DRA + "/resourceslices",
        "{'apiVersion':'resource.k8s.io/v1','kind':'ResourceSlice','metadata':{'name':'dra-mig'},"
            + "'spec':{'driver':'gpu.nvidia.com','nodeName':'"
            + NODE
            + "','pool':{'name':'"
            + NODE
            + "','generation':1,'resourceSliceCount':1},'devices':[{'name':'gpu-1-mig-0',"
            + "'attributes':{'uuid':{'string':'MIG-0'},'parentUUID':{'string':'"
            + CARD_B
            + "'}},'capacity':{'memory':{'value':'5Gi'}}}]}}");
    String share =
        "'driver':'hami-core-gpu.project-hami.io','pool':'"
            + NODE
            + "',"
            + "'device':'hami-gpu-0','consumedCapacity':{'memory':'11Gi','cores':'40'},'shareID':";
    claim("s1", share + "'11111111-1111-1111-1111-111111111111'");
    claim("s1-again", share + "'11111111-1111-1111-1111-111111111111'");
    claim("s2", share + "'22222222-2222-2222-2222-222222222222'");
    claim("m1", "'driver':'gpu.nvidia.com','pool':'" + NODE + "','device':'gpu-1-mig-0'");
    PodView pod = createP1();

    FilterDecision full = hami.extenderFilter().filter(pod, List.of(NODE));

    assertThat(full.node()).as("A holds 22528 MiB, 80 %%; B is whole: %s", full).isEmpty();
    assertThat(full.failedNodes()).containsKey(NODE);

    // kube-scheduler deallocates share 2 (its pod finished): the next read frees it
    send("PATCH", DRA + "/namespaces/default/resourceclaims/s2/status", "{'status':null}");
    FilterDecision freed = hami.extenderFilter().filter(pod, List.of(NODE));

    assertThat(freed.node()).as("%s", freed).contains(NODE);
    assertThat(freed.devices().orElseThrow().forVendor("NVIDIA").get(0))
        .extracting(ContainerDevice::uuid)
        .containsExactly(CARD_A);

    allocatedClaim("u1", "gpu-9"); // a device no ResourceSlice publishes
    FilterDecision suspect = hami.extenderFilter().filter(pod, List.of(NODE));

    assertThat(suspect.node()).as("%s", suspect).isEmpty();
    assertThat(suspect.failedNodes().get(NODE))
        .contains(
            "DRA allocation of an unknown card",
            "default/u1",
            "gpu-9",
            "no current ResourceSlice publishes it");
  }

  /**
   * A pod partly routed through DRA: kube-scheduler gave container {@code gpu}'s {@code
   * nvidia.com/gpu} through DRA (the node's allocatable {@code nvidia.com/gpu} is 0: its device
   * plugin is unhealthy, HAMi's registration still lists card A; {@code filterExtendedResources}
   * delegates a resource name for every container of the pod at once) while container {@code npu}'s
   * {@value NpuTestVendor#COUNT} goes through its device plugin, which takes its own lock. Kubelet
   * never calls NVIDIA's device plugin for the pod, so the bind neither counts the pod's NVIDIA
   * request again (its claim holds card A: the usage counts it), nor takes NVIDIA's lock (nothing
   * would release it before it expires), nor leaves the Filter's NVIDIA allocation on the pod (no
   * Allocate consumes it; HAMi's Go scheduler would count a card the pod does not use). The NPU
   * part is bound as HAMi binds it: its lock, its allocation, bind phase allocating until its
   * device plugin's Allocate.
   */
  @Test
  void aPodPartlyRoutedThroughDraLocksAndAllocatesOnlyWhatItsDevicePluginsServe() throws Exception {
    VendorRegistry registry =
        VendorRegistry.builder().discover().register(new NpuTestVendor()).build();
    NodeView gpuNode = PodBinderOverHttpTest.gpuNode(NODE, CARD_A);
    Map<String, String> annotations = new HashMap<>(gpuNode.annotations());
    annotations.put(NpuTestVendor.REGISTRATION, "NPU-0");
    EmulatorObjects.createNode(k8s, NodeView.of(NODE, annotations));
    createSlice();
    PodView mixed =
        PodView.builder("default", "mixed")
            .containers(
                List.of(container("gpu", "nvidia.com/gpu"), container("npu", NpuTestVendor.COUNT)))
            .build();
    String uid = EmulatorObjects.pod(EmulatorObjects.createPod(k8s, mixed, "default")).view().uid();
    try (KubernetesHamiStack stack =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(30)))
            .stack(s -> s.registry(registry))
            .build()) {
      // the extender's Filter runs before the DynamicResources plugin's PreBind writes the claim
      FilterDecision d =
          stack
              .extenderFilter()
              .filter(EmulatorObjects.readPod(k8s, "default", "mixed"), List.of(NODE));
      assertThat(d.node()).as("%s", d).contains(NODE);
      allocatedClaim("mixed-extended-resources-x", "gpu-0");
      send(
          "PATCH",
          "/api/v1/namespaces/default/pods/mixed/status",
          "{'status':{'extendedResourceClaimStatus':{'resourceClaimName':"
              + "'mixed-extended-resources-x','requestMappings':[{'containerName':'gpu',"
              + "'resourceName':'nvidia.com/gpu','requestName':'container-0-request-0'}]}}}");

      BindResult r = stack.podBinder().bind("default", "mixed", uid, NODE);

      assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
      assertThat(r.lockKeys()).containsExactly(NpuTestVendor.LOCK);
      Map<String, String> node =
          EmulatorObjects.node(k8s.get("nodes", null, NODE).orElseThrow()).annotations();
      assertThat(node).containsKey(NpuTestVendor.LOCK).doesNotContainKey("hami.io/mutex.lock");
      Map<String, String> pod = EmulatorObjects.readPod(k8s, "default", "mixed").annotations();
      assertThat(pod)
          .containsEntry("hami.io/bind-phase", "allocating")
          .containsKey("example.com/npu-devices-to-allocate")
          .doesNotContainKeys("hami.io/vgpu-devices-to-allocate", "hami.io/vgpu-devices-allocated");
      assertThat(r.devices().orElseThrow().byVendor()).containsOnlyKeys(NpuTestVendor.WORD);
    }
  }

  private static ContainerView container(String name, String resource) {
    return new ContainerView(
        name, "cuda", Map.of(resource, BigDecimal.ONE), Map.of(resource, BigDecimal.ONE));
  }

  @Test
  void aClaimedCardIsNotOfferedAndAClaimAllocatedBeforeTheLockIsCaughtByTheRefit()
      throws Exception {
    claimAllocatedBeforeTheLockIsCaught(null);
  }

  /**
   * The same with the re-fit's reads side by side (issue 25 item 2, {@code bindAsync}): the claims'
   * LIST issued beside the slices' and the pods' still counts the claim allocated before the lock.
   */
  @Test
  void aClaimAllocatedBeforeTheLockIsCaughtWhenTheRefitsReadsRunSideBySide() throws Exception {
    ExecutorService steps = Executors.newFixedThreadPool(8);
    try {
      claimAllocatedBeforeTheLockIsCaught(steps);
    } finally {
      steps.shutdownNow();
    }
  }

  /** With {@code steps}, through {@code bindAsync} on it; without, through {@code bind}. */
  private void claimAllocatedBeforeTheLockIsCaught(ExecutorService steps) throws Exception {
    EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(NODE, CARD_A, CARD_B));
    createSlice();
    allocatedClaim("c1", "gpu-0");
    PodView pod = createP1();

    FilterDecision d = hami.extenderFilter().filter(pod, List.of(NODE));

    assertThat(d.node()).as("%s", d).contains(NODE);
    assertThat(d.devices().orElseThrow().forVendor("NVIDIA").get(0))
        .extracting(ContainerDevice::uuid)
        .containsExactly(CARD_B);

    allocatedClaim("c2", "gpu-1"); // kube-scheduler takes card B while p1 waits for the lock
    BindResult r =
        steps == null
            ? hami.podBinder().bind("default", "p1", pod.uid(), NODE)
            : hami.podBinder()
                .bindAsync("default", "p1", pod.uid(), NODE, steps)
                .get(60, TimeUnit.SECONDS);

    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.DOES_NOT_FIT);
    assertThat(r.reason()).contains("the Filter's allocation no longer fits");
    assertThat(r.locksHeld()).isFalse();
  }
}
