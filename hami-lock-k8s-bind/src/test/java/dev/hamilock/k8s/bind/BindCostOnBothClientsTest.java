package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.HamiFlows;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.fabric8.Fabric8LockStack;
import dev.hamilock.fabric8.bind.Fabric8HamiStack;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Request counts of the bind flow on both clients (issue 27 item 2, in the manner of
 * hami-lock-k8s's {@code ApiCostOnBackendsTest}): one uncontended bind of the guide's gang member
 * through client-java's {@link KubernetesHamiStack} and through fabric8's {@link Fabric8HamiStack}
 * sends the same 8 requests, counted by verb and resource at the emulator (GET pod, GET node, PATCH
 * node for the lock, the 2 LISTs of the node's pods, PATCH pod for the allocation, GET node for the
 * lock's confirmation, POST of the Binding), plus each stack's one DRA discovery GET.
 */
class BindCostOnBothClientsTest {

  private static final RetryPolicy FAST =
      RetryPolicy.builder()
          .pollInterval(Duration.ofMillis(5))
          .retryTimeout(Duration.ofSeconds(5))
          .build();

  @Test
  void anUncontendedBindCostsTheSameEightRequestsOnBothClients() throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Map<String, Long> clientJava;
      try (KubernetesHamiStack hami =
          KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
              .retryPolicy(FAST)
              .watch(false)
              .build()) {
        clientJava = bindOnce(k8s, hami, "cj");
      }
      Map<String, Long> fabric8;
      try (KubernetesClient client = Fabric8Replicas.client(k8s);
          var hami =
              Fabric8HamiStack.builder(client)
                  .retryPolicy(FAST)
                  .backend(Fabric8LockStack.backend(client, Optional.empty()))
                  .build()) {
        fabric8 = bindOnce(k8s, hami, "f8");
      }
      assertThat(clientJava)
          .containsExactlyInAnyOrderEntriesOf(
              Map.of(
                  "get pods", 1L,
                  "get nodes", 2L,
                  "patch nodes", 1L,
                  "list pods", 2L,
                  "patch pods", 1L,
                  "create pods/binding", 1L,
                  // the stack's one DRA discovery (issue 28): the emulator 404s it, never again
                  "get /apis/resource.k8s.io/v1", 1L));
      assertThat(fabric8).isEqualTo(clientJava);
    }
  }

  /**
   * Binds a fresh pod on a fresh node; answers the requests the bind sent, by verb and resource.
   */
  private static Map<String, Long> bindOnce(ApiServerEmulator k8s, HamiFlows hami, String run)
      throws Exception {
    String node = run + "-gpu-node";
    EmulatorObjects.createNode(
        k8s, PodBinderOverHttpTest.gpuNode(node, "GPU-" + run + "-0fc3eda5-e98b-a25b"));
    String uid =
        EmulatorObjects.pod(
                EmulatorObjects.createPod(
                    k8s, PodBinderOverHttpTest.guidePod(run + "-p", Map.of(), Map.of())))
            .view()
            .uid();
    k8s.resetCounters();
    BindResult r = hami.podBinder().bind(PodBinderOverHttpTest.NS, run + "-p", uid, node);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    Map<String, Long> counts = new TreeMap<>();
    k8s.requestCounts().forEach((k, v) -> counts.put(k.toString(), v));
    return counts;
  }
}
