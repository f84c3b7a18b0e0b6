package dev.hamilock.bind.testing;

import dev.hamilock.bind.ContainerAllocation;
import dev.hamilock.bind.HandoffResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What the simulated device plugins physically handed out: for each pod the kubelet started, the
 * container allocations its Allocate call returned (device UUIDs, MiB, cores) and whose annotation
 * they came from. The checker sums these per GPU — the ground truth of over-commit and of swapped
 * limits (HAMi#781). Thread-safe.
 */
public final class PhysicalLedger {

  /**
   * One Allocate outcome.
   *
   * @param podKey {@code namespace/name} of the pod the kubelet was starting
   * @param servedPodKey whose to-allocate entries the plugin used ("" if none)
   * @param containers the allocations handed out (empty unless COMPLETED/PARTIAL)
   * @param reason the hand-off's reason ("" on success)
   */
  public record Entry(
      String node,
      String podKey,
      HandoffResult.Status status,
      String servedPodKey,
      List<ContainerAllocation> containers,
      String reason) {
    /** Validates and copies. */
    public Entry {
      Objects.requireNonNull(node, "node");
      Objects.requireNonNull(podKey, "podKey");
      Objects.requireNonNull(status, "status");
      Objects.requireNonNull(servedPodKey, "servedPodKey");
      containers = List.copyOf(containers);
      Objects.requireNonNull(reason, "reason");
    }
  }

  private final List<Entry> entries = new ArrayList<>();

  /** Creates an empty ledger. */
  public PhysicalLedger() {}

  /**
   * Records one Allocate call.
   *
   * @param podKey the pod the kubelet was starting
   */
  public void record(String node, String podKey, HandoffResult result) {
    String served = result.pod().map(o -> o.namespace() + "/" + o.name()).orElse("");
    Entry e = new Entry(node, podKey, result.status(), served, result.handedOut(), result.reason());
    synchronized (entries) {
      entries.add(e);
    }
  }

  /**
   * @return every entry, in recording order
   */
  public List<Entry> entries() {
    synchronized (entries) {
      return List.copyOf(entries);
    }
  }
}
