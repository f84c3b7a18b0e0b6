package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.annotation.AnnotationPatches;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.fabric8.Fabric8LockStore;
import dev.hamilock.k8s.fixtures.WireCapture;
import dev.hamilock.k8s.fixtures.WireCapture.Request;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Wire conformance across clients (issue 27): the same store operations — a create, a contended
 * create (422, then the GET for the witness), a replace, a stale replace, a stale and a real
 * delete, a create on a node without an annotations map (the merge patch) — send the same requests,
 * byte for byte (method, path, media type, body), through client-java's {@link
 * NodeAnnotationLockStore} and hami-lock-fabric8's store, captured at each client's HTTP layer, on
 * the emulator and on the real kube-apiserver.
 */
class SameWireBytesOnBothClientsTest {

  @BackendTest
  void bothClientsSendTheSameBytesForTheSameOperations(KubeBackend k8s) throws Exception {
    Cluster cluster = new Cluster(k8s);

    List<Request> clientJava = Collections.synchronizedList(new ArrayList<>());
    ApiClient api = WireCapture.clientJava(k8s, clientJava);
    List<Request> a =
        script(
            cluster,
            NodeAnnotationLockStore.builder(api, Duration.ofSeconds(5)).build(),
            clientJava);

    List<Request> fabric8 = Collections.synchronizedList(new ArrayList<>());
    List<Request> b;
    try (KubernetesClient client = WireCapture.fabric8(k8s, fabric8)) {
      b = script(cluster, Fabric8LockStore.builder(client).build(), fabric8);
    }

    // n1: 7 JSON patches and 3 GETs (two witnesses, one read); n2, without an annotations map:
    // the JSON patch, the GET, the merge patch, then the delete
    assertThat(a)
        .extracting(Request::method)
        .containsExactly(
            "PATCH", "PATCH", "GET", "PATCH", "PATCH", "GET", "PATCH", "PATCH", "GET", "PATCH",
            "GET", "PATCH", "PATCH");
    assertThat(a.get(0).body()).isEqualTo(AnnotationPatches.create(Cluster.KEY, "v1"));
    assertThat(a.get(11).mediaType()).isEqualTo("application/merge-patch+json");
    assertThat(b).isEqualTo(a);
  }

  /** The operations, judged by their results; answers what the store sent to the nodes API. */
  private static List<Request> script(Cluster cluster, LockStore store, List<Request> sent)
      throws Exception {
    String n1 = cluster.node(Cluster.unique("wire"));
    String n2 = cluster.bareNode(Cluster.unique("wire-bare"));
    String odd = "v\"5\\\u2028\u0001é";
    sent.clear();
    String k = Cluster.KEY;
    assertThat(store.createIfAbsent(n1, k, "v1")).isEqualTo(CasResult.written());
    assertThat(store.createIfAbsent(n1, k, "v2"))
        .isEqualTo(CasResult.notWritten(Optional.of("v1")));
    assertThat(store.replaceIfEquals(n1, k, "v1", "v3")).isEqualTo(CasResult.written());
    assertThat(store.replaceIfEquals(n1, k, "v1", "v4"))
        .isEqualTo(CasResult.notWritten(Optional.of("v3")));
    assertThat(store.deleteIfEquals(n1, k, "v1")).isFalse();
    assertThat(store.deleteIfEquals(n1, k, "v3")).isTrue();
    assertThat(store.read(n1, k)).isEmpty();
    assertThat(store.createIfAbsent(n2, k, odd)).isEqualTo(CasResult.written());
    assertThat(cluster.lock(n2)).contains(odd);
    assertThat(store.deleteIfEquals(n2, k, odd)).isTrue();
    List<Request> out = new ArrayList<>();
    synchronized (sent) {
      for (Request r : sent) {
        if (r.path().startsWith("/api/v1/nodes")) {
          out.add(
              new Request(
                  r.method(),
                  r.path().replace(n1, "N1").replace(n2, "N2"),
                  r.mediaType().replaceAll(";.*", "").trim(),
                  r.body().replaceAll("\"resourceVersion\":\"[^\"]*\"", "\"resourceVersion\":RV")));
        }
      }
    }
    return out;
  }
}
