package dev.hamilock.bind.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 2: the re-fit's two pod lists ({@link KubernetesWire#assignedTo(String,
 * KubernetesWire.PodList, Executor)}) are issued side by side, and kept only when their snapshots
 * are in order (the unbound pods' list {@code resourceVersion} &le; the bound pods'): a pod bound
 * between two snapshots taken in the wrong order is in neither list.
 */
class Issue25SideBySidePodListsTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String NODE = "gpu-1";

  /** Answers each list from a queue per query (unbound: labelSelector; bound: no label). */
  static final class Lists implements KubernetesWire.PodList {
    final Deque<JsonNode> unbound = new ArrayDeque<>();
    final Deque<JsonNode> bound = new ArrayDeque<>();
    final List<String> calls = new ArrayList<>();
    Runnable onUnbound = () -> {};

    @Override
    public JsonNode list(String what, Map<String, String> query) {
      boolean isUnbound = query.containsKey("labelSelector");
      calls.add(isUnbound ? "unbound" : "bound");
      if (isUnbound) {
        onUnbound.run();
      }
      return (isUnbound ? unbound : bound).removeFirst();
    }
  }

  static JsonNode list(String resourceVersion, String... boundPods) throws Exception {
    StringBuilder items = new StringBuilder();
    for (String p : boundPods) {
      items.append(items.length() == 0 ? "" : ",");
      items.append(
          """
          {"metadata":{"name":"%s","namespace":"default","uid":"u-%s",
           "annotations":{"hami.io/vgpu-node":"%s"}},
           "spec":{"nodeName":"%s"},"status":{"phase":"Pending"}}"""
              .formatted(p, p, NODE, NODE));
    }
    return JSON.readTree(
        """
        {"kind":"PodList","metadata":{"resourceVersion":"%s"},"items":[%s]}"""
            .formatted(resourceVersion, items));
  }

  static List<String> names(List<ClusterPod> pods) {
    return pods.stream().map(p -> p.view().name()).toList();
  }

  @Test
  void aPodBoundBetweenTwoListsWhoseSnapshotsAreOutOfOrderIsFoundByListingTheBoundPodsAgain()
      throws Exception {
    Lists lists = new Lists();
    // p was bound at revision 11: the bound list's snapshot (10) is before it, the unbound
    // list's (12) after it — p is in neither
    lists.unbound.add(list("12"));
    lists.bound.add(list("10", "q"));
    lists.bound.add(list("13", "q", "p"));

    List<ClusterPod> pods = KubernetesWire.assignedTo(NODE, lists, Runnable::run);

    assertThat(names(pods)).containsExactlyInAnyOrder("q", "p");
    assertThat(lists.calls).containsExactly("bound", "unbound", "bound");
  }

  @Test
  void listsInOrderCostTwoRequestsAndTheBoundListIsIssuedBesideTheUnboundOne() throws Exception {
    Lists lists = new Lists();
    lists.unbound.add(list("12"));
    lists.bound.add(list("12", "q")); // same snapshot: nothing written between
    List<Runnable> forked = new ArrayList<>();
    Executor notYet = forked::add; // takes the task, starts it later
    List<Integer> forkedWhenUnboundListed = new ArrayList<>();
    lists.onUnbound = () -> forkedWhenUnboundListed.add(forked.size());

    List<ClusterPod> pods = KubernetesWire.assignedTo(NODE, lists, notYet);

    assertThat(forkedWhenUnboundListed).containsExactly(1);
    assertThat(names(pods)).containsExactly("q");
    assertThat(lists.calls).containsExactly("unbound", "bound"); // not started: run by the join
  }

  @Test
  void aListVersionThatIsNotAPositiveIntegerIsNeverTrustedToOrderTheSnapshots() throws Exception {
    for (String rv : List.of("", "0", "012", "x7", "-3", "99999999999999999999")) {
      Lists lists = new Lists();
      lists.unbound.add(list(rv));
      lists.bound.add(list("20"));
      lists.bound.add(list("21", "p"));

      List<ClusterPod> pods = KubernetesWire.assignedTo(NODE, lists, Runnable::run);

      assertThat(names(pods)).as("unbound list at \"%s\"", rv).containsExactly("p");
      assertThat(lists.calls).as(rv).containsExactly("bound", "unbound", "bound");
    }
  }

  @Test
  void withoutAnExecutorTheListsRunInSequenceUnboundFirst() throws Exception {
    Lists lists = new Lists();
    lists.unbound.add(list("5"));
    lists.bound.add(list("6", "q"));

    assertThat(names(KubernetesWire.assignedTo(NODE, lists, null))).containsExactly("q");
    assertThat(lists.calls).containsExactly("unbound", "bound");
  }
}
