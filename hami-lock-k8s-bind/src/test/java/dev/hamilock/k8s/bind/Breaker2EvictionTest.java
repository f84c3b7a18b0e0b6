package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.fabric8.bind.Fabric8Cluster;
import dev.hamilock.k8s.fixtures.BackendFixtures;
import dev.hamilock.k8s.fixtures.WireCapture;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.Map;

/**
 * {@link ClusterWriter#evictPod} of a pod re-created under its name (a StatefulSet pod, a pod
 * deleted and created again), by the old UID, on both clients: kube-apiserver answers the
 * eviction's UID precondition with 409 Conflict ({@code pkg/registry/core/pod/storage/eviction.go};
 * for a Pending pod only after retrying it for ~10 s, {@code EvictionsRetry}, so a client's 10 s
 * timeout may answer first), never NOT_FOUND as the port used to promise; the new pod is left
 * alone. GpuPreemption tells "gone" by reading the pod again (GpuPreemptionTest
 * #aVictimReCreatedUnderItsNameIsTreatedAsGone). Found by a reviewer (breaker2).
 */
class Breaker2EvictionTest {

  @BackendTest
  void evictingAReCreatedPodByItsOldUidFailsAsTheServerAnswersOnBothClients(KubeBackend k8s)
      throws Exception {
    KubernetesCluster javaPorts = KubernetesCluster.create(k8s.apiClient());
    check(k8s, javaPorts, "j");
    try (KubernetesClient client = WireCapture.fabric8(k8s, new ArrayList<>())) {
      check(k8s, Fabric8Cluster.create(client), "f");
    }
  }

  private static void check(KubeBackend k8s, ClusterWriter writer, String tag) throws Exception {
    String run = BackendFixtures.runId("evict" + tag);
    BackendFixtures.namespace(k8s, run);
    String oldUid = create(k8s, run);
    assertThat(k8s.delete("pods", run, "p")).isTrue();
    String newUid = create(k8s, run);
    assertThat(newUid).isNotEqualTo(oldUid);
    assertThatThrownBy(() -> writer.evictPod(run, "p", oldUid))
        .isInstanceOfSatisfying(
            ClusterException.class,
            e -> {
              if (k8s.kind() == KubeBackend.Kind.REAL
                  && e.kind() == ClusterException.Kind.UNAVAILABLE) {
                assertThat(e.httpStatus()).as(e.getMessage()).isEmpty(); // the timeout
              } else {
                assertThat(e.kind()).as(e.getMessage()).isEqualTo(ClusterException.Kind.CONFLICT);
                assertThat(e.httpStatus()).hasValue(409);
              }
            });
    JsonNode stored = k8s.get("pods", run, "p").orElseThrow();
    assertThat(stored.path("metadata").path("uid").asText()).isEqualTo(newUid);
    assertThat(stored.path("metadata").has("deletionTimestamp")).isFalse();
  }

  private static String create(KubeBackend k8s, String ns) {
    return EmulatorObjects.createPod(
            k8s, PodBinderOverHttpTest.guidePod("p", Map.of(), Map.of()), ns)
        .path("metadata")
        .path("uid")
        .asText();
  }
}
