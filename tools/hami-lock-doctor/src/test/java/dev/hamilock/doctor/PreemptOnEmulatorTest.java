package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.TestPod;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * {@code preempt NS/POD} on the emulator in HAMi#1527's situation: every card is short of GPU
 * memory for a high-priority pod, everything else free. The dry run names the victims the SPI's
 * planner picks (kube-scheduler's reprieve order: the more important lower-priority pod is put
 * back), never a pod of equal or higher priority, and says it could not read PodDisruptionBudgets
 * (the emulator does not serve {@code policy/v1}). The table is the doctor README's {@code preempt}
 * sample.
 */
class PreemptOnEmulatorTest {
  private static final String NS = "default";
  private static final String A1 = "GPU-03f69c50-207a-2038-9b45-23cac89cb67d";
  private static final String A2 = "GPU-1afede84-4e70-2174-49af-f07ebb94d1ae";

  ApiServerEmulator k8s;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
  }

  @AfterEach
  void stop() {
    k8s.close();
  }

  /** A Running pod holding {@code mib} MiB on each of {@code cards} of {@code node}. */
  private void running(String name, int priority, String node, String... cards) {
    StringBuilder alloc = new StringBuilder();
    for (String c : cards) {
      alloc.append(c).append(",NVIDIA,40000,0:");
    }
    ObjectNode pod =
        TestPod.named(NS, name)
            .schedulerName("hami-scheduler")
            .nodeName(node)
            .phase("Running")
            .annotation("hami.io/vgpu-node", node)
            .annotation("hami.io/bind-phase", "success")
            .annotation("hami.io/vgpu-devices-allocated", alloc.append(";").toString())
            .container("cuda", "nvidia/cuda:12.4.1-base-ubuntu22.04")
            .limit("nvidia.com/gpu", "" + cards.length)
            .limit("nvidia.com/gpumem", "40000")
            .toJson();
    ((ObjectNode) pod.path("spec")).put("priority", priority);
    k8s.create(pod);
  }

  @Test
  void hami1527MemoryShortNamesTheLowestPriorityPodWhoseEvictionSufficesAndNoEqualPriorityPod()
      throws Exception {
    Fixtures.gpuNode(k8s, "gpu-a");
    Fixtures.gpuNode(k8s, "gpu-b");
    running("low-10", 10, "gpu-a", A1);
    running("low-5", 5, "gpu-a", A2);
    running("equal", 1000, "gpu-b", A1, A2);
    ObjectNode big =
        TestPod.named(NS, "big")
            .schedulerName("hami-scheduler")
            .container("train", "nvidia/cuda:12.4.1-base-ubuntu22.04")
            .limit("nvidia.com/gpu", "1")
            .limit("nvidia.com/gpumem", "30000")
            .toJson();
    ((ObjectNode) big.path("spec")).put("priority", 1000);
    k8s.create(big);

    Fixtures.Run run = Fixtures.run(k8s, Instant.now(), "--json", "preempt", NS + "/big");
    assertThat(run.exit()).as(run.err()).isZero();
    JsonNode p = new ObjectMapper().readTree(run.out()).path("preemption");
    assertThat(p.path("bestNode").asText()).as(run.out()).isEqualTo("gpu-a");
    assertThat(p.path("pdbsRead").asBoolean(false))
        .as("the emulator serves policy/v1 PodDisruptionBudgets (none here)")
        .isTrue();
    List<String> outcomes = new ArrayList<>();
    List<String> victims = new ArrayList<>();
    for (JsonNode n : p.path("nodes")) {
      outcomes.add(n.path("node").asText() + " " + n.path("outcome").asText());
      n.path("victims").forEach(v -> victims.add(v.path("pod").asText()));
    }
    assertThat(outcomes).containsExactly("gpu-a PREEMPT", "gpu-b NONE");
    assertThat(victims).containsExactly(NS + "/low-5");
    assertThat(p.path("nodes").get(1).path("reason").asText())
        .as("gpu-b: only an equal-priority pod there")
        .startsWith("No preemption victims found");

    Fixtures.Run table = Fixtures.run(k8s, Instant.now(), "preempt", NS + "/big");
    assertThat(table.out())
        .contains("preempt default/big (priority 1000): best node gpu-a, evict 1 pod(s)")
        .contains("evict default/low-5 (priority 5)")
        .doesNotContain("evict default/low-10")
        .contains("weighing 4 pod(s) and 0 PodDisruptionBudget(s)");
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target/readme-preempt.txt"), table.out(), StandardCharsets.UTF_8);
    assertThat(
            Fixtures.readmeBlock(
                Path.of("README.md"),
                "<!-- doctor-preempt-output: begin -->",
                "<!-- doctor-preempt-output: end -->"))
        .as("README block vs target/readme-preempt.txt")
        .isEqualTo(table.out());
  }

  /**
   * A gang member is planned with its gang's other pending members ({@code planGang}): train-0
   * alone would evict low-5 only, the gang needs low-10 too; gang big fits nowhere.
   */
  @Test
  void aGangMemberIsPlannedWithItsWholeGang() throws Exception {
    try (InputStream in = getClass().getResourceAsStream("/preempt/gang-cluster.yaml")) {
      new Yaml().loadAll(in).forEach(k8s::create);
    }
    Fixtures.Run run = Fixtures.run(k8s, Instant.now(), "preempt", NS + "/train-0");
    assertThat(run.exit()).as(run.err()).isZero();
    assertThat(run.out())
        .as(run.out())
        .contains(
            "preempt default/train-0 (priority 1000, gang train: 2 pending member(s)): evict 2"
                + " pod(s), 0 PDB violation(s)")
        .contains("member default/train-0 on gpu-a", "member default/train-1 on gpu-a")
        .contains(
            "evict default/low-5 (priority 5, on node gpu-a)",
            "evict default/low-10 (priority 10, on node gpu-a)");
    assertThat(
            Fixtures.readmeBlock(
                Path.of("README.md"),
                "<!-- doctor-preempt-gang-output: begin -->",
                "<!-- doctor-preempt-gang-output: end -->"))
        .as("README block vs this run")
        .isEqualTo(run.out());
    JsonNode gang =
        new ObjectMapper()
            .readTree(Fixtures.run(k8s, Instant.now(), "--json", "preempt", NS + "/train-1").out())
            .path("preemption")
            .path("gang");
    assertThat(gang.path("placed").asBoolean(false)).as(gang.toString()).isTrue();
    assertThat(gang.path("members").findValuesAsText("pod"))
        .containsExactly(NS + "/train-1", NS + "/train-0");
    assertThat(gang.path("victims").findValuesAsText("pod"))
        .containsExactlyInAnyOrder(NS + "/low-5", NS + "/low-10");

    Fixtures.Run none = Fixtures.run(k8s, Instant.now(), "preempt", NS + "/big-0");
    assertThat(none.out())
        .as(none.out())
        .contains("(priority 1000, gang big: 3 pending member(s)): no plan places every member")
        .doesNotContain("evict ");
  }

  @Test
  void aPodThatDoesNotExistIsAnErrorNamingIt() {
    Fixtures.Run run = Fixtures.run(k8s, Instant.now(), "preempt", NS + "/nobody");
    assertThat(run.exit()).isEqualTo(1);
    assertThat(run.out()).contains("PE01").contains("default/nobody").contains("no such pod");
  }
}
