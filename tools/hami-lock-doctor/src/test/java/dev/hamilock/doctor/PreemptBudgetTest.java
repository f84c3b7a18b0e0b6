package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hamilock.device.spi.preempt.DisruptionBudget;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How {@code preempt} reads a {@code policy/v1} PodDisruptionBudget (canned JSON: the emulator does
 * not serve {@code policy/v1}): the pods of its namespace its selector matches ({@code matchLabels}
 * and {@code matchExpressions}), none for an empty selector, pods in {@code status.disruptedPods}
 * skipped — kube-scheduler's {@code FilterVictimsWithPDBViolation}.
 */
class PreemptBudgetTest {
  private static final ObjectMapper M = new ObjectMapper();

  private static JsonNode json(String s) throws Exception {
    return M.readTree(s.replace('\'', '"'));
  }

  private static JsonNode pod(String ns, String name, String app) throws Exception {
    return json(
        "{'metadata':{'namespace':'"
            + ns
            + "','name':'"
            + name
            + "','labels':{'app':'"
            + app
            + "'}}}");
  }

  @Test
  void selectorNamespaceAndDisruptedPodsDecideWhatABudgetProtects() throws Exception {
    List<JsonNode> pods =
        List.of(
            pod("a", "w1", "web"),
            pod("a", "w2", "web"),
            pod("a", "db", "db"),
            pod("b", "w3", "web"));
    DisruptionBudget b =
        Preempt.budget(
            json(
                "{'metadata':{'namespace':'a','name':'web'},'spec':{'selector':{'matchLabels':"
                    + "{'app':'web'},'matchExpressions':[{'key':'app','operator':'NotIn',"
                    + "'values':['db']}]}},'status':{'disruptionsAllowed':1,"
                    + "'disruptedPods':{'w2':'2026-12-01T00:00:00Z'}}}"),
            pods);
    assertThat(b.name()).isEqualTo("a/web");
    assertThat(b.protectedPods()).containsExactly("a/w1");
    assertThat(b.disruptionsAllowed()).isEqualTo(1);

    DisruptionBudget empty =
        Preempt.budget(
            json("{'metadata':{'namespace':'a','name':'all'},'spec':{'selector':{}},'status':{}}"),
            pods);
    assertThat(empty.protectedPods()).isEmpty();

    DisruptionBudget in =
        Preempt.budget(
            json(
                "{'metadata':{'namespace':'a','name':'in'},'spec':{'selector':{'matchExpressions':"
                    + "[{'key':'app','operator':'In','values':['db','cache']}]}},'status':{}}"),
            pods);
    assertThat(in.protectedPods()).containsExactly("a/db");
  }

  @Test
  void anUnknownOperatorKeepsTheNamespacesPodsProtectedAsPreflightReadsIt() throws Exception {
    // one label-selector reading for preflight and doctor (preflight's Dra.selects): an operator
    // the API server would refuse holds, so the plan never evicts a pod the budget may protect
    DisruptionBudget b =
        Preempt.budget(
            json(
                "{'metadata':{'namespace':'a','name':'odd'},'spec':{'selector':{'matchExpressions':"
                    + "[{'key':'app','operator':'Gt','values':['1']}]}},'status':{}}"),
            List.of(pod("a", "w1", "web"), pod("b", "w3", "web")));
    assertThat(b.protectedPods()).containsExactly("a/w1");
  }
}
