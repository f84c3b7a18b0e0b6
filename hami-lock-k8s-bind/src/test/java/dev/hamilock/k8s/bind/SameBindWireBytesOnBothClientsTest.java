package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.fabric8.bind.Fabric8Cluster;
import dev.hamilock.k8s.fixtures.BackendFixtures;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okio.Buffer;

/**
 * Wire conformance of the bind flow's cluster ports across clients (issue 27), the bind-side twin
 * of hami-lock-k8s's {@code SameWireBytesOnBothClientsTest} (which cannot see these ports): the
 * same port calls — the reads of a bind (node, pod, the two lists of the pods assigned to a node,
 * the pods on a node), the allocation PATCH (annotations set and removed, a label, the UID), the
 * Binding POST, a second Binding (409, then the GET of the pod for its node) and a Warning Event —
 * send the same requests, byte for byte (method, path and query, media type, body), through
 * client-java's {@link KubernetesCluster} and hami-lock-fabric8-bind's {@link Fabric8Cluster},
 * captured at each client's HTTP layer, on the emulator and on the real kube-apiserver.
 */
class SameBindWireBytesOnBothClientsTest {

  /** One captured request; run-specific names replaced by placeholders. */
  record Request(String method, String path, String mediaType, String body) {}

  @BackendTest
  void bothClientsSendTheSameBytesForTheSameBindCalls(KubeBackend k8s) throws Exception {
    List<Request> clientJava = Collections.synchronizedList(new ArrayList<>());
    ApiClient api = k8s.newApiClient(Duration.ofSeconds(5));
    api.setHttpClient(
        api.getHttpClient()
            .newBuilder()
            .addInterceptor(
                chain -> {
                  okhttp3.Request r = chain.request();
                  String body = "";
                  String type = "";
                  if (r.body() != null) {
                    Buffer b = new Buffer();
                    r.body().writeTo(b);
                    body = b.readUtf8();
                    type = String.valueOf(r.body().contentType());
                  }
                  String query = r.url().encodedQuery();
                  clientJava.add(
                      new Request(
                          r.method(),
                          r.url().encodedPath() + (query == null ? "" : "?" + query),
                          type,
                          body));
                  return chain.proceed(r);
                })
            .build());
    KubernetesCluster javaPorts = KubernetesCluster.create(api);
    List<Request> a = script(k8s, javaPorts, javaPorts, clientJava);

    List<Request> fabric8 = Collections.synchronizedList(new ArrayList<>());
    Interceptor capture =
        new Interceptor() {
          @Override
          public void before(BasicBuilder builder, HttpRequest r, RequestTags tags) {
            String type =
                r instanceof StandardHttpRequest s && s.getContentType() != null
                    ? s.getContentType()
                    : Optional.ofNullable(r.header("Content-Type")).orElse("");
            String query = r.uri().getRawQuery();
            fabric8.add(
                new Request(
                    r.method(),
                    r.uri().getRawPath() + (query == null ? "" : "?" + query),
                    type,
                    Optional.ofNullable(r.bodyString()).orElse("")));
          }
        };
    List<Request> b;
    try (KubernetesClient client =
        Fabric8Replicas.client(k8s, h -> h.addOrReplaceInterceptor("capture", capture))) {
      Fabric8Cluster fabric8Ports = Fabric8Cluster.create(client);
      b = script(k8s, fabric8Ports, fabric8Ports, fabric8);
    }

    assertThat(a)
        .extracting(Request::method)
        .containsExactly("GET", "GET", "GET", "GET", "GET", "PATCH", "POST", "POST", "GET", "POST");
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
    assertThat(writer.bind(run, "p", uid, node).kind()).isEqualTo(BindingPostResult.Kind.BOUND);
    BindingPostResult again = writer.bind(run, "p", uid, node);
    assertThat(again.kind()).isEqualTo(BindingPostResult.Kind.ALREADY_BOUND);
    assertThat(again.boundNode()).contains(node);
    try {
      writer.recordPodWarning(run, "p", uid, "IgnoredAnnotation", "unknown policy \"x\" ignored");
    } catch (ClusterException e) { // the emulator serves no events; the request was still sent
      assertThat(k8s.kind()).isEqualTo(KubeBackend.Kind.EMULATOR);
      assertThat(e.kind()).isEqualTo(ClusterException.Kind.NOT_FOUND);
    }
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
                      .replaceAll("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ", "TIME")));
        }
      }
    }
    return out;
  }
}
