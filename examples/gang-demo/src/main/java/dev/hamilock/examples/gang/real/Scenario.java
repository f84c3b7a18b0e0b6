package dev.hamilock.examples.gang.real;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One real-scheduler scenario: the GPU nodes it may use (the others are cordoned for the run) and
 * its pods in creation order, each the guide's member shape (1 GPU, 3000 MiB, 30 % of a card),
 * either a member of a gang (a PodGroup whose minimum is the number of its members here) or a plain
 * pod.
 *
 * @param name short name ({@code --scenario} value)
 * @param title what it shows, for the report
 * @param nodes the nodes the run may use, names from {@link RealGpuNode#ALL}
 * @param pods the pods, in the order they are created
 */
public record Scenario(String name, String title, List<String> nodes, List<ScenarioPod> pods) {

  /**
   * A pod of a scenario.
   *
   * @param name the pod's name suffix (the run prefixes it with its tag)
   * @param group the gang it belongs to (suffix too), empty for a plain pod
   */
  public record ScenarioPod(String name, Optional<String> group) {
    /** Validates. */
    public ScenarioPod {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(group, "group");
    }
  }

  /** Validates and copies. */
  public Scenario {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(title, "title");
    nodes = List.copyOf(nodes);
    pods = List.copyOf(pods);
    for (String n : nodes) {
      checkArgument(
          RealGpuNode.ALL.containsKey(n),
          "scenario %s: unknown node %s (known: %s)",
          name,
          n,
          RealGpuNode.ALL.keySet());
    }
  }

  /**
   * @return each gang's name and its number of members (its PodGroup's minimum), in order of
   *     appearance
   */
  public Map<String, Integer> groups() {
    Map<String, Integer> out = new LinkedHashMap<>();
    pods.forEach(p -> p.group().ifPresent(g -> out.merge(g, 1, Integer::sum)));
    return out;
  }

  /**
   * The guide's gang: PodGroup minMember 4, four members, on the guide's two nodes (F-03 and F-17).
   */
  public static final Scenario GUIDE =
      new Scenario(
          "guide",
          "the guide's gang of 4 on 2 nodes",
          List.of("node-a", "node-b"),
          gang("gang", "worker-", 4));

  /**
   * Sixteen members of one gang on one node of seven H20-3e cards (F-08): one lock, 16 contenders.
   */
  public static final Scenario SIXTEEN =
      new Scenario(
          "sixteen",
          "a gang of 16 on 1 node (7x H20-3e)",
          List.of("node-h20"),
          gang("gang", "worker-", 16));

  /**
   * The guide's gang and four plain pods of the same shape, created alternately, on the guide's two
   * nodes: the plain pods are not retried by HAMi's gang retry and re-queue with the scheduler's
   * backoff.
   */
  public static final Scenario MIXED =
      new Scenario(
          "mixed", "a gang of 4 and 4 plain pods on 2 nodes", List.of("node-a", "node-b"), mixed());

  /** The scenarios of {@code gang-demo --real-cluster}, in the order they run. */
  public static final List<Scenario> ALL = List.of(GUIDE, SIXTEEN, MIXED);

  private static List<ScenarioPod> gang(String group, String prefix, int n) {
    List<ScenarioPod> out = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      out.add(new ScenarioPod(prefix + i, Optional.of(group)));
    }
    return out;
  }

  private static List<ScenarioPod> mixed() {
    List<ScenarioPod> out = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      out.add(new ScenarioPod("worker-" + i, Optional.of("gang")));
      out.add(new ScenarioPod("plain-" + i, Optional.empty()));
    }
    return out;
  }
}
