package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.fabric8.bind.Fabric8Cluster;
import dev.hamilock.k8s.fixtures.BackendFixtures;
import dev.hamilock.k8s.fixtures.WireCapture;
import dev.hamilock.k8s.fixtures.WireCapture.Request;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Wire conformance of the bind flow's cluster ports across clients (issue 27), the bind-side twin
 * of hami-lock-k8s's {@code SameWireBytesOnBothClientsTest} (which cannot see these ports): the
 * same port calls — the reads of a bind (node, pod, the two lists of the pods assigned to a node,
 * the pods on a node), the allocation PATCH (annotations set and removed, a label, the UID), the
 * Binding POST (UID and resourceVersion preconditions), a second Binding (409 on the stale
 * resourceVersion, then the GET of the pod for its node) and a Warning Event — send the same
 * requests, byte for byte (method, path and query, media type, body), through client-java's {@link
 * KubernetesCluster} and hami-lock-fabric8-bind's {@link Fabric8Cluster}, captured at each client's
 * HTTP layer, on the emulator and on the real kube-apiserver.
 */
class SameBindWireBytesOnBothClientsTest {

  @BackendTest
  void bothClientsSendTheSameBytesForTheSameBindCalls(KubeBackend k8s) throws Exception {
    List<Request> clientJava = Collections.synchronizedList(new ArrayList<>());
    KubernetesCluster javaPorts = KubernetesCluster.create(WireCapture.clientJava(k8s, clientJava));
    List<Request> a = script(k8s, javaPorts, javaPorts, clientJava);

    List<Request> fabric8 = Collections.synchronizedList(new ArrayList<>());
    List<Request> b;
    try (KubernetesClient client = WireCapture.fabric8(k8s, fabric8)) {
      Fabric8Cluster fabric8Ports = Fabric8Cluster.create(client);
      b = script(k8s, fabric8Ports, fabric8Ports, fabric8);
    }

    assertThat(a)
        .extracting(Request::method)
        .containsExactly(
            "GET", "GET", "GET", "GET", "GET", "PATCH", "POST", "POST", "GET", "POST", "PATCH",
            "POST", "GET");
    assertThat(a.get(6).body())
        .isEqualTo(
            "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p\","
                + "\"namespace\":\"RUN\",\"uid\":\"UID\",\"resourceVersion\":\"RV\"},"
                + "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"NODE\"}}");
    assertThat(a.get(10).body())
        .isEqualTo(
            "{\"metadata\":{\"annotations\":{\"hami.io/x\":\"1\"},\"resourceVersion\":\"RV\"}}");
    assertThat(a.get(11).path()).isEqualTo("/api/v1/namespaces/RUN/pods/p/eviction");
    assertThat(a.get(11).body())
        .isEqualTo(
            "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"p\","
                + "\"namespace\":\"RUN\"},\"deleteOptions\":{\"preconditions\":{\"uid\":\"UID\"}}}");
    assertThat(a.get(5).mediaType()).isEqualTo("application/merge-patch+json");
    assertThat(a.get(5).body())
        .isEqualTo(
            "{\"metadata\":{\"annotations\":{\"hami.io/bind-phase\":\"allocating\","
                + "\"hami.io/gone\":null},\"labels\":{\"hami.io/vgpu-node\":\"NODE\"},"
                + "\"uid\":\"UID\"}}");
    assertThat(b).isEqualTo(a);
  }

  /** The calls, judged by their results; answers what the ports sent, normalized. */
  private static List<Request> script(
      KubeBackend k8s, ClusterReader reader, ClusterWriter writer, List<Request> sent)
      throws Exception {
    String run = BackendFixtures.runId("wire");
    String node = BackendFixtures.node(k8s, run + "-n", run);
    BackendFixtures.namespace(k8s, run);
    JsonNode created =
        k8s.create(
            Map.of(
                "apiVersion",
                "v1",
                "kind",
                "Pod",
                "metadata",
                Map.of("name", "p", "namespace", run),
                "spec",
                Map.of("containers", List.of(Map.of("name", "main", "image", "busybox")))));
    String uid = created.path("metadata").path("uid").asText();
    sent.clear();
    assertThat(reader.readNode(node)).isPresent();
    assertThat(reader.readPod(run, "p")).isPresent();
    assertThat(reader.listPodsAssignedTo(node)).isEmpty();
    assertThat(reader.listPodsOnNode(node)).isEmpty();
    ClusterPod patched =
        writer.patchPodMetadata(
            run,
            "p",
            MetadataPatch.builder()
                .setAnnotation("hami.io/bind-phase", "allocating")
                .removeAnnotation("hami.io/gone")
                .setLabel("hami.io/vgpu-node", node)
                .expectedUid(uid)
                .build());
    assertThat(patched.view().annotations()).containsEntry("hami.io/bind-phase", "allocating");
    String rv = patched.resourceVersion();
    assertThat(writer.bind(run, "p", uid, rv, node).kind()).isEqualTo(BindingPostResult.Kind.BOUND);
    // 409 on the resourceVersion precondition (checked before "already assigned"), then the GET
    BindingPostResult again = writer.bind(run, "p", uid, rv, node);
    assertThat(again.kind()).isEqualTo(BindingPostResult.Kind.ALREADY_BOUND);
    assertThat(again.boundNode()).contains(node);
    try {
      writer.recordPodEvent(
          run, "p", uid, "Warning", "IgnoredAnnotation", "unknown policy \"x\" ignored");
    } catch (ClusterException e) { // the emulator serves no events; the request was still sent
      assertThat(k8s.kind()).isEqualTo(KubeBackend.Kind.EMULATOR);
      assertThat(e.kind()).isEqualTo(ClusterException.Kind.NOT_FOUND);
    }
    // GpuPreemption's compare-and-set (stale: the Binding changed the pod) and its eviction
    MetadataPatch stale =
        MetadataPatch.builder()
            .setAnnotation("hami.io/x", "1")
            .expectedResourceVersion(patched.resourceVersion())
            .build();
    assertThatThrownBy(() -> writer.patchPodMetadata(run, "p", stale))
        .isInstanceOfSatisfying(
            ClusterException.class,
            e -> assertThat(e.kind()).isEqualTo(ClusterException.Kind.CONFLICT));
    writer.evictPod(run, "p", uid);
    assertThat(reader.readPod(run, "p").map(p -> p.view().deleting()).orElse(true)).isTrue();
    List<Request> out = new ArrayList<>();
    synchronized (sent) {
      for (Request r : sent) {
        if (r.path().startsWith("/api/v1/")) {
          out.add(
              new Request(
                  r.method(),
                  r.path().replace(node, "NODE").replace(run, "RUN"),
                  r.mediaType().replaceAll(";.*", "").trim(),
                  r.body()
                      .replace(node, "NODE")
                      .replace(run, "RUN")
                      .replace(uid, "UID")
                      .replaceAll("\"resourceVersion\":\"\\d+\"", "\"resourceVersion\":\"RV\"")
                      .replaceAll("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ", "TIME")));
        }
      }
    }
    return out;
  }
}
