package dev.hamilock.benchmarks.convergence;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One gang-convergence scenario.
 *
 * @param gangSize members released together (N)
 * @param nodes nodes the members are spread over round-robin: 1 (all contend for one lock) or
 *     {@code gangSize} (one member per node: cross-node parallelism, HAMi#810)
 * @param latencyMs latency the emulator adds to every request, in ms
 * @param replicas scheduler replicas (separate processes with their own clients); members are
 *     assigned round-robin
 */
public record Scenario(int gangSize, int nodes, int latencyMs, int replicas) {

  /** Gang sizes of the single-node scenarios. */
  public static final List<Integer> GANG_SIZES = List.of(2, 5, 8, 16, 32);

  /**
   * @throws IllegalArgumentException if a count is not positive, nodes exceed members, or latency
   *     is negative
   */
  public Scenario {
    checkArgument(
        gangSize >= 1 && nodes >= 1 && replicas >= 1 && nodes <= gangSize && latencyMs >= 0,
        "invalid scenario: gangSize=%s nodes=%s latencyMs=%s replicas=%s",
        gangSize,
        nodes,
        latencyMs,
        replicas);
  }

  /**
   * The full matrix: N ∈ {2, 5, 8, 16, 32} on one node, plus 32 members on 32 nodes, each with
   * latency 0 and 2 ms and 1 and 3 replicas.
   *
   * @return 24 scenarios
   */
  public static List<Scenario> matrix() {
    List<Scenario> out = new ArrayList<>();
    for (int latency : List.of(0, 2)) {
      for (int replicas : List.of(1, 3)) {
        for (int n : GANG_SIZES) {
          out.add(new Scenario(n, 1, latency, replicas));
        }
        out.add(new Scenario(32, 32, latency, replicas));
      }
    }
    return out;
  }

  /**
   * @return whether members contend for one node's lock
   */
  public boolean singleNode() {
    return nodes == 1;
  }

  /**
   * The lower bound on convergence time: the lock is held for {@code hold} per member and members
   * on one node cannot overlap, so {@code ceil(N / nodes) × hold}.
   *
   * @param hold the device plugin's Allocate hold
   */
  public Duration lowerBound(Duration hold) {
    int perNode = (gangSize + nodes - 1) / nodes;
    return hold.multipliedBy(perNode);
  }

  /**
   * @return e.g. {@code N=5 1 node, 0 ms, 1 replica}
   */
  public String describe() {
    return "N="
        + gangSize
        + (nodes == 1 ? " on 1 node" : " on " + nodes + " nodes")
        + ", "
        + latencyMs
        + " ms, "
        + replicas
        + (replicas == 1 ? " replica" : " replicas");
  }
}
