package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.TestPod;
import dev.hamilock.testkit.junit.BackendTest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@code audit} on the emulator and on kube-apiserver + etcd (issue 23 item 6): a gang bound
 * through hami-lock's bind flow leaves its node clean; a pod seeded onto the same card with an
 * allocation HAMi's scheduler would never write (another writer, a lost lock) is found as that
 * card's memory over-commit. The server is shared by other tests, so only findings about this
 * test's node count.
 */
class AuditOnBackendsTest {
  private static final String NS = "default";

  KubeBackend k8s;
  KubernetesHamiStack hami;

  @BeforeEach
  void setUp(KubeBackend backend) {
    k8s = backend;
    hami = Fixtures.hami(backend);
  }

  @AfterEach
  void tearDown() {
    hami.close();
  }

  /** The UUID of the first card in a pod's {@code hami.io/vgpu-devices-allocated}. */
  private String card(String pod) {
    String allocated =
        k8s.get("pods", NS, pod)
            .orElseThrow()
            .path("metadata")
            .path("annotations")
            .path("hami.io/vgpu-devices-allocated")
            .asText();
    return allocated.substring(0, allocated.indexOf(','));
  }

  /** The --json findings that name {@code node} or one of its pods. */
  private List<JsonNode> findingsAbout(String node, List<String> pods) throws Exception {
    Fixtures.Run run = Fixtures.run(k8s, Instant.now(), "--json", "audit");
    assertThat(run.exit()).as(run.err()).isIn(0, 1);
    List<JsonNode> mine = new ArrayList<>();
    for (JsonNode f : new ObjectMapper().readTree(run.out()).path("findings")) {
      String text = f.toString();
      if (text.contains(node) || pods.stream().anyMatch(p -> text.contains(NS + "/" + p))) {
        mine.add(f);
      }
    }
    return mine;
  }

  @BackendTest
  void aGangBoundThroughTheFlowIsCleanAndAPodSeededOntoItsCardIsAMemoryOverCommit()
      throws Exception {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("audit"));
    List<String> pods = List.of(Fixtures.unique("member"), Fixtures.unique("member"));
    for (String pod : pods) {
      Fixtures.gpuPod(
          k8s, NS, pod, Map.of("scheduling.x-k8s.io/pod-group", "g"), Map.of(), "ubuntu:22.04");
      Fixtures.bind(hami, NS, pod, node);
      // the device plugin's Allocate: hands the allocation over and releases the node lock
      assertThat(hami.devicePluginHandoff("NVIDIA").allocate(node, List.of(1)).lockReleased())
          .isTrue();
    }
    assertThat(findingsAbout(node, pods)).as("a clean gang run").isEmpty();

    String card = card(pods.get(0));
    String intruder = Fixtures.unique("intruder");
    k8s.create(
        TestPod.named(NS, intruder)
            .schedulerName("hami-scheduler")
            .nodeName(node)
            .annotation("hami.io/vgpu-node", node)
            .annotation("hami.io/bind-phase", "success")
            .annotation("hami.io/vgpu-devices-allocated", card + ",NVIDIA,46068,0:;")
            .container("cuda", "nvidia/cuda:12.4.1-base-ubuntu22.04")
            .limit("nvidia.com/gpu", "1")
            .toJson());

    List<JsonNode> found = findingsAbout(node, List.of(intruder));
    assertThat(found).as("%s", found).hasSize(1);
    JsonNode f = found.get(0);
    assertThat(f.path("check").asText()).isEqualTo("AU01");
    assertThat(f.toString()).contains(card).contains("memory 49068/46068 MiB");
  }

  /**
   * A pod given a preemption reservation on the card a bound pod uses: counted while the
   * reservation holds (a memory over-commit), not once it expired, as the Filter and a bind's
   * re-fit count it (UsageReconstructor's rule, by the API server's clock).
   */
  @BackendTest
  void aPreemptorsReservationCountsWhileItHoldsAndNotOnceExpired() throws Exception {
    String node = Fixtures.gpuNode(k8s, Fixtures.unique("reserve"));
    String member = Fixtures.unique("member");
    Fixtures.gpuPod(k8s, NS, member, Map.of(), Map.of(), "ubuntu:22.04");
    Fixtures.bind(hami, NS, member, node);
    String card = card(member);
    for (String until : List.of("2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z")) {
      String preemptor = Fixtures.unique("preemptor");
      k8s.create(
          TestPod.named(NS, preemptor)
              .schedulerName("hami-scheduler")
              .annotation("hami.io/vgpu-node", node)
              .annotation("hami.io/vgpu-devices-allocated", card + ",NVIDIA,46068,0:;")
              .annotation("hamilock.dev/preemption-reservation", node + "," + until)
              .container("cuda", "nvidia/cuda:12.4.1-base-ubuntu22.04")
              .limit("nvidia.com/gpu", "1")
              .toJson());
      List<JsonNode> found = findingsAbout(node, List.of(preemptor));
      if (until.startsWith("2000")) {
        assertThat(found).as("expired: not counted").isEmpty();
      } else {
        assertThat(found).as("%s", found).hasSize(1);
        assertThat(found.get(0).toString()).contains("AU01").contains(card);
      }
    }
  }
}
