package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.KubernetesWire;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.RequestInfo;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Binding;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Each port method of {@link KubernetesCluster} over HTTP: happy path, absence, unknown fields,
 * failure classes.
 */
class KubernetesClusterTest {
  private static final String NODE_KEY = "hami.io/vgpu-node";

  private ApiServerEmulator k8s;
  private KubernetesCluster cluster;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
    cluster = KubernetesCluster.create(k8s.newApiClient(Duration.ofSeconds(10)));
  }

  @AfterEach
  void stop() {
    k8s.close();
  }

  private PodView gpuPod(
      String ns, String name, Map<String, String> annotations, Map<String, String> labels) {
    PodView v =
        PodView.builder(ns, name)
            .labels(labels)
            .annotations(annotations)
            .initContainers(
                List.of(
                    new ContainerView(
                        "init", "busybox", Map.of(), Map.of("cpu", new BigDecimal("0.5")))))
            .containers(
                List.of(
                    new ContainerView(
                        "main",
                        "cuda",
                        Map.of(
                            "nvidia.com/gpu",
                            BigDecimal.ONE,
                            "nvidia.com/gpumem",
                            BigDecimal.valueOf(3000),
                            "nvidia.com/gpucores",
                            BigDecimal.valueOf(30)),
                        Map.of())))
            .build();
    EmulatorObjects.createPod(k8s, v);
    return v;
  }

  private void assigned(String ns, String name, String annotationNode, String labelNode) {
    Map<String, String> ann = annotationNode == null ? Map.of() : Map.of(NODE_KEY, annotationNode);
    Map<String, String> lab = labelNode == null ? Map.of() : Map.of(NODE_KEY, labelNode);
    gpuPod(ns, name, ann, lab);
  }

  private void bindDirectly(String ns, String name, String node) {
    k8s.mutate(
        "pods",
        ns,
        name,
        o -> {
          ((ObjectNode) o.get("spec")).put("nodeName", node);
          return o;
        });
  }

  private static ClusterException.Kind kindOf(ThrowingCall call) {
    try {
      call.run();
    } catch (ClusterException e) {
      return e.kind();
    }
    throw new AssertionError("expected a ClusterException");
  }

  @FunctionalInterface
  interface ThrowingCall {
    void run() throws ClusterException;
  }

  // ----------------------------------------------------------------------------- reads

  @Test
  void readNodeMapsLabelsAnnotationsAndExactAllocatable() throws Exception {
    EmulatorObjects.createNode(
        k8s,
        new NodeView(
            "node-a",
            Map.of("gpu", "true"),
            Map.of("hami.io/node-nvidia-register", "GPU-1,10,24576,100,NVIDIA-A10,0,true:"),
            Map.of("nvidia.com/gpu", BigDecimal.TEN, "memory", new BigDecimal("17179869184"))));

    NodeView n = cluster.readNode("node-a").orElseThrow();

    assertThat(n.name()).isEqualTo("node-a");
    assertThat(n.labels()).containsEntry("gpu", "true");
    assertThat(n.annotations())
        .containsEntry("hami.io/node-nvidia-register", "GPU-1,10,24576,100,NVIDIA-A10,0,true:");
    assertThat(n.allocatable()).containsEntry("nvidia.com/gpu", BigDecimal.TEN);
    assertThat(n.allocatable().get("memory")).isEqualByComparingTo("17179869184");
    assertThat(cluster.readNode("absent")).isEmpty();
  }

  @Test
  void readPodMapsContainersPhaseBindingAndResourceVersion() throws Exception {
    gpuPod("team", "p1", Map.of("a", "1"), Map.of("scheduling.x-k8s.io/pod-group", "g"));

    ClusterPod unbound = cluster.readPod("team", "p1").orElseThrow();
    assertThat(unbound.isBound()).isFalse();
    assertThat(unbound.view().uid()).isNotBlank();
    assertThat(unbound.view().phase()).isEqualTo(PodView.Phase.PENDING);
    assertThat(unbound.view().annotations()).containsEntry("a", "1");
    assertThat(unbound.view().labels()).containsEntry("scheduling.x-k8s.io/pod-group", "g");
    assertThat(unbound.view().initContainers())
        .singleElement()
        .satisfies(c -> assertThat(c.requests().get("cpu")).isEqualByComparingTo("0.5"));
    assertThat(unbound.view().containers())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.name()).isEqualTo("main");
              assertThat(c.limits().get("nvidia.com/gpumem")).isEqualByComparingTo("3000");
            });

    bindDirectly("team", "p1", "node-a");
    ClusterPod bound = cluster.readPod("team", "p1").orElseThrow();
    assertThat(bound.nodeName()).contains("node-a");
    assertThat(bound.resourceVersion()).isNotEqualTo(unbound.resourceVersion());
    assertThat(cluster.readPod("team", "absent")).isEmpty();
    assertThat(cluster.readPod("no-such-namespace", "p1")).isEmpty();
  }

  @Test
  void unknownFieldsBreakTheTypedClientButNoPortMethod() throws Exception {
    EmulatorObjects.createNode(k8s, NodeView.of("node-a", Map.of("x", "y")));
    assigned("default", "p1", "node-a", "node-a");
    k8s.setInjectUnknownFields(true);
    CoreV1Api typed = new CoreV1Api(k8s.newApiClient(Duration.ofSeconds(10)));
    assertThatThrownBy(() -> typed.readNamespacedPod("p1", "default").execute())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(ApiServerEmulator.UNKNOWN_FIELD);

    assertThat(cluster.readNode("node-a")).isPresent();
    assertThat(cluster.readPod("default", "p1")).isPresent();
    assertThat(cluster.listPodsAssignedTo("node-a")).hasSize(1);
    assertThat(cluster.listPodsOnNode("node-a")).isEmpty();
    ClusterPod patched =
        cluster.patchPodMetadata(
            "default", "p1", MetadataPatch.builder().setAnnotation("k", "v").build());
    assertThat(patched.view().annotations()).containsEntry("k", "v");
    assertThat(cluster.bind("default", "p1", patched.view().uid(), "", "node-a").kind())
        .isEqualTo(BindingPostResult.Kind.BOUND);
    assertThat(cluster.listPodsOnNode("node-a")).hasSize(1);
  }

  @Test
  void podsAssignedToANodeAreSelectedByLabelAndKeptByAnnotation() throws Exception {
    assigned("default", "both", "node-a", "node-a");
    assigned("other", "both-other-namespace", "node-a", "node-a");
    assigned("default", "bound", "node-a", "node-a");
    bindDirectly("default", "bound", "node-a");
    assigned("default", "bound-elsewhere", "node-a", "node-a");
    bindDirectly("default", "bound-elsewhere", "node-b");
    assigned("default", "stale-label", "node-b", "node-a");
    assigned("default", "other-node", "node-b", "node-b");
    assigned("default", "unassigned", null, null);
    List<RequestInfo> lists = new CopyOnWriteArrayList<>();
    k8s.addFault(FaultRule.matching().verb("list").resource("pods").invoke(lists::add));

    List<ClusterPod> pods = cluster.listPodsAssignedTo("node-a");

    assertThat(pods)
        .extracting(ClusterPod::key)
        .containsExactlyInAnyOrder("default/both", "other/both-other-namespace", "default/bound");
    // unbound first, then bound: both served by kube-apiserver's spec.nodeName index
    assertThat(lists)
        .extracting(
            r -> java.net.URLDecoder.decode(r.query(), java.nio.charset.StandardCharsets.UTF_8))
        .satisfiesExactly(
            q ->
                assertThat(q)
                    .contains("labelSelector=hami.io/vgpu-node=node-a")
                    .contains("fieldSelector=spec.nodeName=")
                    .doesNotContain("spec.nodeName=node-a")
                    .doesNotContain("resourceVersion"),
            q ->
                assertThat(q)
                    .doesNotContain("labelSelector")
                    .contains("fieldSelector=spec.nodeName=node-a")
                    .doesNotContain("resourceVersion"));
    assertThat(lists).allSatisfy(r -> assertThat(r.path()).isEqualTo("/api/v1/pods"));
  }

  @Test
  void aBoundPodWhoseAllocationCarriesNoNodeLabelIsStillCounted() throws Exception {
    // issue 23 (other writers): the annotation is the truth HAMi accounts by; a pod bound to the
    // node with hami.io/vgpu-node set but without the same-named label (written by a HAMi
    // version that does not label, or the label removed by hand) still holds its devices there.
    // Left out of the usage, its cards look free and a second pod over-commits them.
    assigned("default", "unlabelled", "node-a", null);
    bindDirectly("default", "unlabelled", "node-a");

    List<ClusterPod> pods = cluster.listPodsAssignedTo("node-a");

    assertThat(pods).extracting(p -> p.view().name()).containsExactly("unlabelled");
  }

  @Test
  void aPodBoundBetweenTheTwoReadsIsCountedOnceAsBound() throws Exception {
    assigned("default", "p1", "node-a", "node-a");
    java.util.concurrent.atomic.AtomicInteger calls =
        new java.util.concurrent.atomic.AtomicInteger();
    k8s.addFault(
        FaultRule.matching()
            .verb("list")
            .resource("pods")
            .invoke(
                r -> {
                  if (calls.incrementAndGet() == 2) {
                    bindDirectly("default", "p1", "node-a");
                  }
                }));

    List<ClusterPod> pods = cluster.listPodsAssignedTo("node-a");

    assertThat(pods).singleElement().satisfies(p -> assertThat(p.nodeName()).contains("node-a"));
  }

  @Test
  void aNodeNameThatCannotBeALabelValueIsMatchedByAnnotationAlone() throws Exception {
    String longNode = "gpu-" + "n".repeat(60) + ".example.com";
    assigned("default", "p1", longNode, null);
    assigned("default", "p2", "node-b", null);

    assertThat(cluster.listPodsAssignedTo(longNode))
        .extracting(ClusterPod::key)
        .containsExactly("default/p1");
  }

  @Test
  void podsOnANodeComeFromTheFieldSelectorInListOrder() throws Exception {
    for (String name : List.of("c", "a", "b")) {
      assigned("default", name, null, null);
      bindDirectly("default", name, "node-a");
    }
    assigned("default", "elsewhere", null, null);
    bindDirectly("default", "elsewhere", "node-b");
    assigned("default", "unbound", null, null);

    assertThat(cluster.listPodsOnNode("node-a"))
        .extracting(ClusterPod::key)
        .containsExactly("default/a", "default/b", "default/c");
  }

  @Test
  void readsRetryTransientFailuresAndThenGiveUpAsUnavailable() throws Exception {
    assigned("default", "p1", null, null);
    k8s.addFault(
        FaultRule.matching()
            .verb("get")
            .resource("pods")
            .times(2)
            .respondStatus(500, "InternalError", "x"));
    k8s.resetCounters();
    assertThat(cluster.readPod("default", "p1")).isPresent();
    assertThat(k8s.requestCount("get", "pods")).isEqualTo(3);

    KubernetesCluster twoAttempts =
        KubernetesCluster.create(
            k8s.newApiClient(Duration.ofSeconds(10)), KubernetesCluster.DEFAULT_REQUEST_TIMEOUT, 2);
    k8s.addFault(
        FaultRule.matching()
            .verb("list")
            .resource("pods")
            .respondStatus(503, "ServiceUnavailable", "x"));
    k8s.resetCounters();
    assertThat(kindOf(() -> twoAttempts.listPodsOnNode("node-a")))
        .isEqualTo(ClusterException.Kind.UNAVAILABLE);
    assertThat(k8s.requestCount("list", "pods")).isEqualTo(2);
    k8s.addFault(
        FaultRule.matching().verb("get").resource("nodes").respondStatus(403, "Forbidden", "no"));
    assertThat(kindOf(() -> twoAttempts.readNode("node-a")))
        .isEqualTo(ClusterException.Kind.REJECTED);
  }

  @Test
  void aRequestWithoutAnswerTimesOutAsUnavailable() throws Exception {
    assigned("default", "p1", null, null);
    KubernetesCluster impatient =
        KubernetesCluster.create(k8s.newApiClient(Duration.ZERO), Duration.ofMillis(300), 1);
    k8s.addFault(
        FaultRule.matching().verb("get").resource("pods").times(1).delay(Duration.ofSeconds(3)));

    ClusterException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ClusterException.class, () -> impatient.readPod("default", "p1"));

    assertThat(e.kind()).isEqualTo(ClusterException.Kind.UNAVAILABLE);
    assertThat(e.getCause()).isInstanceOf(ApiException.class);
    assertThat(((ApiException) e.getCause()).getCode()).isZero();
  }

  // ----------------------------------------------------------------------------- writes

  @Test
  void mergePatchSetsAndRemovesAnnotationsAndLabelsAndKeepsTheRest() throws Exception {
    gpuPod("default", "p1", Map.of("keep", "1", "drop", "2"), Map.of("keep", "1", "drop", "2"));
    String uid = cluster.readPod("default", "p1").orElseThrow().view().uid();

    ClusterPod after =
        cluster.patchPodMetadata(
            "default",
            "p1",
            MetadataPatch.builder()
                .expectedUid(uid)
                .setAnnotation("hami.io/bind-phase", "allocating")
                .removeAnnotation("drop")
                .removeAnnotation("never-there")
                .setLabel(NODE_KEY, "node-a")
                .removeLabel("drop")
                .build());

    assertThat(after.view().annotations())
        .containsOnly(Map.entry("keep", "1"), Map.entry("hami.io/bind-phase", "allocating"));
    assertThat(after.view().labels())
        .containsOnly(Map.entry("keep", "1"), Map.entry(NODE_KEY, "node-a"));
    assertThat(EmulatorObjects.annotations(k8s, "default", "p1"))
        .isEqualTo(after.view().annotations());
    ClusterPod same = cluster.patchPodMetadata("default", "p1", MetadataPatch.builder().build());
    assertThat(same.resourceVersion()).isEqualTo(after.resourceVersion());
  }

  @Test
  void mergePatchBodyIsShapedAsHamisGoEncoding() {
    String body =
        KubernetesWire.mergePatch(
            MetadataPatch.builder()
                .setAnnotation("hami.io/vgpu-time", "1722492000")
                .setAnnotation("hami.io/vgpu-node", "node1")
                .setAnnotation("hami.io/vgpu-devices-to-allocate", "GPU-a,NVIDIA,3000,30:;")
                .setAnnotation("hami.io/vgpu-devices-allocated", "GPU-a,NVIDIA,3000,30:;")
                .setLabel(NODE_KEY, "node1")
                .build());
    assertThat(body)
        .isEqualTo(
            "{\"metadata\":{\"annotations\":{"
                + "\"hami.io/vgpu-devices-allocated\":\"GPU-a,NVIDIA,3000,30:;\","
                + "\"hami.io/vgpu-devices-to-allocate\":\"GPU-a,NVIDIA,3000,30:;\","
                + "\"hami.io/vgpu-node\":\"node1\",\"hami.io/vgpu-time\":\"1722492000\"},"
                + "\"labels\":{\"hami.io/vgpu-node\":\"node1\"}}}");
    assertThat(
            KubernetesWire.mergePatch(
                MetadataPatch.builder()
                    .setAnnotation("hami.io/bind-time", "1722492000")
                    .setAnnotation("hami.io/bind-phase", "allocating")
                    .build()))
        .isEqualTo(
            "{\"metadata\":{\"annotations\":{\"hami.io/bind-phase\":\"allocating\",\"hami.io/bind-time\":\"1722492000\"}}}");
    assertThat(
            KubernetesWire.mergePatch(
                MetadataPatch.builder().removeAnnotation("a").expectedUid("u-1").build()))
        .isEqualTo("{\"metadata\":{\"annotations\":{\"a\":null},\"uid\":\"u-1\"}}");
  }

  @Test
  void aPatchForAnotherIncarnationOrAMissingPodIsNotFound() throws Exception {
    assigned("default", "p1", null, null);
    MetadataPatch wrongUid =
        MetadataPatch.builder().setAnnotation("k", "v").expectedUid("not-the-uid").build();

    assertThat(kindOf(() -> cluster.patchPodMetadata("default", "p1", wrongUid)))
        .isEqualTo(ClusterException.Kind.NOT_FOUND);
    assertThat(EmulatorObjects.annotations(k8s, "default", "p1")).doesNotContainKey("k");
    assertThat(
            kindOf(
                () -> cluster.patchPodMetadata("default", "gone", MetadataPatch.builder().build())))
        .isEqualTo(ClusterException.Kind.NOT_FOUND);
  }

  @Test
  void writesAreRetriedOn429ButNotOnAnswersThatMayHaveBeenApplied() throws Exception {
    assigned("default", "p1", null, null);
    MetadataPatch patch = MetadataPatch.builder().setAnnotation("k", "v").build();
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("pods")
            .times(1)
            .respondStatus(429, "TooManyRequests", "slow"));
    k8s.resetCounters();
    assertThat(cluster.patchPodMetadata("default", "p1", patch).view().annotations())
        .containsEntry("k", "v");
    assertThat(k8s.requestCount("patch", "pods")).isEqualTo(2);

    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("pods")
            .times(1)
            .respondStatus(500, "InternalError", "x"));
    k8s.resetCounters();
    assertThat(kindOf(() -> cluster.patchPodMetadata("default", "p1", patch)))
        .isEqualTo(ClusterException.Kind.UNAVAILABLE);
    assertThat(k8s.requestCount("patch", "pods")).isEqualTo(1);

    k8s.addFault(
        FaultRule.matching().verb("patch").resource("pods").times(1).dropResponseAfterApply());
    MetadataPatch other = MetadataPatch.builder().setAnnotation("k", "w").build();
    assertThat(kindOf(() -> cluster.patchPodMetadata("default", "p1", other)))
        .isEqualTo(ClusterException.Kind.UNAVAILABLE);
    assertThat(EmulatorObjects.annotations(k8s, "default", "p1"))
        .containsEntry("k", "w"); // applied, answer lost

    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("pods")
            .times(1)
            .respondStatus(403, "Forbidden", "no"));
    assertThat(kindOf(() -> cluster.patchPodMetadata("default", "p1", patch)))
        .isEqualTo(ClusterException.Kind.REJECTED);
    k8s.addFault(
        FaultRule.matching()
            .verb("patch")
            .resource("pods")
            .times(1)
            .respondStatus(409, "Conflict", "busy"));
    assertThat(kindOf(() -> cluster.patchPodMetadata("default", "p1", patch)))
        .isEqualTo(ClusterException.Kind.CONFLICT);
  }

  // ----------------------------------------------------------------------------- binding

  @Test
  void aBindingIsBoundWhereTheTypedClientThrowsOnTheStatusAnswer() throws Exception {
    assigned("default", "typed", null, null);
    assigned("default", "p1", null, null);
    String uid = cluster.readPod("default", "p1").orElseThrow().view().uid();
    CoreV1Api typed = new CoreV1Api(k8s.newApiClient(Duration.ofSeconds(10)));
    V1Binding body =
        new V1Binding()
            .metadata(new V1ObjectMeta().name("typed").namespace("default"))
            .target(new V1ObjectReference().apiVersion("v1").kind("Node").name("node-a"));
    assertThatThrownBy(() -> typed.createNamespacedPodBinding("typed", "default", body).execute())
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(cluster.readPod("default", "typed").orElseThrow().nodeName())
        .contains("node-a"); // it was bound

    assertThat(cluster.bind("default", "p1", uid, "", "node-a"))
        .isEqualTo(BindingPostResult.bound());
    assertThat(cluster.readPod("default", "p1").orElseThrow().nodeName()).contains("node-a");

    BindingPostResult again = cluster.bind("default", "p1", uid, "", "node-b");
    assertThat(again.kind()).isEqualTo(BindingPostResult.Kind.ALREADY_BOUND);
    assertThat(again.boundNode()).contains("node-a");
  }

  @Test
  void aBindingOfAnotherIncarnationOrAMissingPodIsNotFound() throws Exception {
    assigned("default", "p1", null, null);

    assertThat(cluster.bind("default", "p1", "other-uid", "", "node-a").kind())
        .isEqualTo(BindingPostResult.Kind.NOT_FOUND);
    assertThat(cluster.bind("default", "gone", "", "", "node-a").kind())
        .isEqualTo(BindingPostResult.Kind.NOT_FOUND);
    assertThat(cluster.readPod("default", "p1").orElseThrow().isBound()).isFalse();
  }

  @Test
  void aBindingWithoutDefiniteAnswerIsAmbiguousAndNeverRepeated() throws Exception {
    for (String name : List.of("p500", "p503", "p429", "closed", "dropped", "slow")) {
      assigned("default", name, null, null);
    }
    KubernetesCluster impatient =
        KubernetesCluster.create(
            k8s.newApiClient(Duration.ZERO),
            Duration.ofMillis(300),
            KubernetesCluster.DEFAULT_MAX_ATTEMPTS);
    k8s.addFault(rule("p500").respondStatus(500, "InternalError", "x"));
    k8s.addFault(rule("p503").respondStatus(503, "ServiceUnavailable", "x"));
    k8s.addFault(rule("p429").respondStatus(429, "TooManyRequests", "x"));
    k8s.addFault(rule("closed").closeConnection());
    k8s.addFault(rule("dropped").dropResponseAfterApply());
    k8s.addFault(rule("slow").delayAfterApply(Duration.ofSeconds(2)));
    k8s.resetCounters();

    for (String name : List.of("p500", "p503", "p429", "closed", "dropped", "slow")) {
      assertThat(impatient.bind("default", name, "", "", "node-a").kind())
          .as(name)
          .isEqualTo(BindingPostResult.Kind.AMBIGUOUS);
    }

    assertThat(k8s.requestCount("create", "pods/binding")).isEqualTo(6);
    assertThat(cluster.readPod("default", "closed").orElseThrow().isBound()).isFalse();
    assertThat(cluster.readPod("default", "dropped").orElseThrow().nodeName()).contains("node-a");
    assertThat(cluster.readPod("default", "slow").orElseThrow().nodeName()).contains("node-a");
  }

  private static FaultRule.Builder rule(String pod) {
    return FaultRule.matching()
        .verb("create")
        .resource("pods/binding")
        .pathMatching(".*/pods/" + pod + "/binding")
        .times(1);
  }

  @Test
  void aBindingOfATerminatingPodOrARefusedBindingIsRejected() throws Exception {
    EmulatorObjects.namespace(k8s, "default");
    k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Pod",
            "metadata",
            Map.of(
                "name",
                "terminating",
                "namespace",
                "default",
                "finalizers",
                List.of("example.com/hold")),
            "spec",
            Map.of("containers", List.of(Map.of("name", "main", "image", "busybox")))));
    k8s.delete("pods", "default", "terminating");
    assigned("default", "refused", null, null);
    k8s.addFault(rule("refused").respondStatus(422, "Invalid", "nope"));

    BindingPostResult terminating = cluster.bind("default", "terminating", "", "", "node-a");
    assertThat(terminating.kind()).isEqualTo(BindingPostResult.Kind.REJECTED);
    assertThat(terminating.detail()).contains("being deleted");
    assertThat(cluster.bind("default", "refused", "", "", "node-a").kind())
        .isEqualTo(BindingPostResult.Kind.REJECTED);
  }

  @Test
  void anInterruptedCallerGetsInterruptedOrAmbiguousWithItsFlagRestored() throws Exception {
    assigned("default", "p1", null, null);
    Thread.currentThread().interrupt();
    try {
      assertThat(kindOf(() -> cluster.readPod("default", "p1")))
          .isEqualTo(ClusterException.Kind.INTERRUPTED);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
      assertThat(cluster.bind("default", "p1", "", "", "node-a").kind())
          .isEqualTo(BindingPostResult.Kind.AMBIGUOUS);
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void builderAndArgumentsAreValidated() {
    assertThatThrownBy(() -> KubernetesCluster.create(null)).hasMessageContaining("apiClient");
    assertThatThrownBy(
            () ->
                KubernetesCluster.create(
                    k8s.apiClient(), Duration.ZERO, KubernetesCluster.DEFAULT_MAX_ATTEMPTS))
        .hasMessageContaining("requestTimeout");
    assertThatThrownBy(
            () ->
                KubernetesCluster.create(
                    k8s.apiClient(), KubernetesCluster.DEFAULT_REQUEST_TIMEOUT, 0))
        .hasMessageContaining("maxAttempts");
    assertThatThrownBy(() -> cluster.readPod(" ", "p")).hasMessageContaining("namespace");
    assertThatThrownBy(() -> cluster.bind("default", "p", null, "", "n"))
        .hasMessageContaining("uid");
    assertThat(Optional.of(cluster.requestTimeout()))
        .contains(KubernetesCluster.DEFAULT_REQUEST_TIMEOUT);
  }
}
