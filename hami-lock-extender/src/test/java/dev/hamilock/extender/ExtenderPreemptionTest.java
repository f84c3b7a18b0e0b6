package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.extender.v1.ExtenderArgs;
import dev.hamilock.extender.v1.ExtenderJson;
import dev.hamilock.extender.v1.ExtenderPreemptionArgs;
import dev.hamilock.extender.v1.ExtenderPreemptionResult;
import dev.hamilock.extender.v1.MetaPod;
import dev.hamilock.extender.v1.MetaVictims;
import dev.hamilock.extender.v1.Victims;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The preempt verb over the in-memory cluster: node-b is one T4 (15360 MiB); pods placed on it
 * through the extender's own Filter (HAMi's allocation annotations), priorities given through
 * {@link RunningPods}. kube-scheduler proposes node-b with a victim it sees (a CPU pod).
 */
class ExtenderPreemptionTest {
  private final TestCluster t = new TestCluster(Duration.ofSeconds(5));
  private final Map<String, Integer> priorities = new LinkedHashMap<>();
  private final Map<String, String> schedulers = new LinkedHashMap<>();

  private void place(String name, int mib, int priority) throws Exception {
    ObjectNode pod = t.addWorker(name, mib, false);
    assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(pod, List.of("node-b"))).nodeNames())
        .contains(List.of("node-b"));
    priorities.put(name, priority);
  }

  private ObjectNode preemptor(int mib) throws Exception {
    return preemptor(mib, 100);
  }

  private ObjectNode preemptor(int mib, int storedPriority) throws Exception {
    ObjectNode pod = t.addWorker("hi", mib, false, storedPriority);
    schedulers.put("default/hi", "hami-scheduler");
    return pod;
  }

  private ExtenderPreemption preemption() {
    RunningPods running =
        () -> {
          List<RunningPod> out = new ArrayList<>();
          int i = 0;
          for (var e : priorities.entrySet()) {
            PodView p = t.cluster.readPod("default", e.getKey()).orElseThrow().view();
            out.add(
                RunningPod.of(
                    p.toBuilder().priority(e.getValue()).build(), Instant.EPOCH.plusSeconds(i++)));
          }
          return out;
        };
    HamiExtender served =
        t.extender.servingSchedulers(
            List.of("hami-scheduler"),
            (ns, name, uid) -> Optional.ofNullable(schedulers.get(ns + "/" + name)));
    return new ExtenderPreemption(
        served, t.cluster, t.config.schedulerFlags().podFitter(t.registry), running);
  }

  private static ExtenderPreemptionArgs meta(ObjectNode pod, String... nodes) {
    Map<String, MetaVictims> m = new LinkedHashMap<>();
    for (String n : nodes) {
      m.put(n, new MetaVictims(List.of(new MetaPod("uid-cpu")), 1));
    }
    return new ExtenderPreemptionArgs(Optional.of(pod), Optional.empty(), Optional.of(m));
  }

  private static List<String> uids(ExtenderPreemptionResult r, String node) {
    return r.nodeNameToMetaVictims().orElseThrow().get(node).pods().stream()
        .map(MetaPod::uid)
        .toList();
  }

  private static java.net.http.HttpResponse<String> post(ExtenderServer s, String body)
      throws Exception {
    return java.net.http.HttpClient.newHttpClient()
        .send(
            java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + s.port() + "/preempt"))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                .build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void servedOverHttpOnlyWhenConfigured() throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5);
    String body = ExtenderJson.encode(meta(preemptor(9000), "node-b"));
    try (ExtenderServer s =
        ExtenderServer.builder(t.config, t.extender).preemption(preemption()).start()) {
      var r = post(s, body);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body())
          .isEqualTo(
              "{\"NodeNameToMetaVictims\":{\"node-b\":{\"Pods\":[{\"UID\":\"uid-cpu\"},{\"UID\":\"uid-lo10\"}],\"NumPDBViolations\":1}}}");
      assertThat(post(s, "{\"NodeNameToMetaVictims\":[]}").statusCode()).isEqualTo(400);
    }
    try (ExtenderServer s = ExtenderServer.builder(t.config, t.extender).start()) {
      assertThat(post(s, body).statusCode()).isEqualTo(404);
    }
  }

  @Test
  void aNodeWhoseCardAResourceClaimHoldsIsDropped() throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5);
    t.claimTheT4Whole(); // no eviction frees a card a claim holds
    ExtenderPreemptionResult r = preemption().preempt(meta(preemptor(9000), "node-b"));
    assertThat(r.nodeNameToMetaVictims()).contains(Map.of());
  }

  @Test
  void gpuMemoryShortAddsTheLeastImportantSufficientVictimOnTheNode() throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5); // 1360 MiB left
    ExtenderPreemptionResult r = preemption().preempt(meta(preemptor(9000), "node-b"));
    // lo10 alone frees 9360 >= 9000; lo5 alone frees 7360: lo5 is reprieved (kube's order)
    assertThat(uids(r, "node-b")).containsExactly("uid-cpu", "uid-lo10");
    assertThat(r.nodeNameToMetaVictims().orElseThrow().get("node-b").numPDBViolations())
        .isEqualTo(1);
  }

  @Test
  void fullPodVictimsAreAnsweredByUidWithTheAddedOnes() throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5);
    ObjectNode kubeVictim = t.addPlainPod("cpu");
    ExtenderPreemptionArgs a =
        new ExtenderPreemptionArgs(
            Optional.of(preemptor(9000)),
            Optional.of(Map.of("node-b", new Victims(List.of(kubeVictim), 0))),
            Optional.empty());
    assertThat(uids(preemption().preempt(a), "node-b")).containsExactly("uid-cpu", "uid-lo10");
  }

  @Test
  void kubesVictimsAloneWhenTheGpuAlreadyFits() throws Exception {
    place("lo10", 4000, 10);
    ExtenderPreemptionResult r = preemption().preempt(meta(preemptor(9000), "node-b"));
    assertThat(uids(r, "node-b")).containsExactly("uid-cpu");
  }

  @Test
  void nodeWhereThePreemptorCannotFitIsDropped() throws Exception {
    place("lo10", 8000, 10);
    // 20000 MiB exceeds the T4 even empty; node-c has no registration
    ExtenderPreemptionResult r = preemption().preempt(meta(preemptor(20000), "node-b", "node-c"));
    assertThat(r.nodeNameToMetaVictims()).contains(Map.of());
  }

  @Test
  void equalPriorityPodsAreNeverAdded() throws Exception {
    place("same", 8000, 100); // the preemptor's priority
    place("lo5", 6000, 5);
    ExtenderPreemptionResult r = preemption().preempt(meta(preemptor(9000), "node-b"));
    // lo5 alone frees 7360 < 9000, and "same" may not go: the node is dropped
    assertThat(r.nodeNameToMetaVictims()).contains(Map.of());
  }

  @Test
  void nodeWhoseVictimIsAGangWithAMemberOnAnotherNodeIsDropped() throws Exception {
    for (String[] m : new String[][] {{"g-b", "node-b"}, {"g-a", "node-a"}}) {
      ObjectNode pod = t.addGangWorker(m[0], 8000); // one pod group: evicted whole or not at all
      assertThat(t.extender.filter(ExtenderArgs.ofNodeNames(pod, List.of(m[1]))).nodeNames())
          .contains(List.of(m[1]));
      priorities.put(m[0], 10);
    }
    place("lo5", 6000, 5);
    // only the gang frees enough on node-b, but kube-scheduler refuses node-a's member there
    assertThat(preemption().preempt(meta(preemptor(9000), "node-b")).nodeNameToMetaVictims())
        .contains(Map.of());
  }

  @Test
  void aForgedBodyPriorityIsAnsweredFromTheStoredPriority() throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5);
    ObjectNode forged = preemptor(9000, 7); // stored: 7, only lo5 is below it
    ((ObjectNode) forged.get("spec")).put("priority", 100);
    // lo5 alone frees 7360 < 9000 MiB and lo10 (10 >= 7) may not go: node-b is dropped
    assertThat(preemption().preempt(meta(forged, "node-b")).nodeNameToMetaVictims())
        .contains(Map.of());
  }

  @Test
  void podOfAnotherSchedulerGetsKubesVictimsUnchanged() throws Exception {
    place("lo10", 8000, 10);
    place("lo5", 6000, 5);
    ObjectNode pod = preemptor(9000);
    schedulers.put("default/hi", "default-scheduler"); // the stored pod's word, not the request's
    ExtenderPreemptionArgs a = meta(pod, "node-b", "node-c");
    assertThat(preemption().preempt(a).nodeNameToMetaVictims())
        .isEqualTo(a.nodeNameToMetaVictims());
  }
}
