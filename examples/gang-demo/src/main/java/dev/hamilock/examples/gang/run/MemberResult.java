package dev.hamilock.examples.gang.run;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What happened to one pod in one run.
 *
 * @param pod {@code namespace/name}
 * @param gangMember whether the pod is a Coscheduling gang member (label, not annotation)
 * @param replica index of the scheduler replica that scheduled and bound it
 * @param node the node it was bound to (or last tried), "" if the Filter never chose one
 * @param gpuUuids the GPUs allocated to it (all containers, in order)
 * @param memoryMiB device memory allocated, MiB, summed over its devices
 * @param cores compute allocated, % of a card, summed over its devices
 * @param lockWaitMs time spent acquiring the node lock over all its bind calls, ms
 * @param lockAttempts node-lock attempts over all its bind calls
 * @param binds bind calls (1 + re-queues)
 * @param result the last bind outcome ({@code BOUND}, {@code CONTENDED}, ...) or {@code
 *     UNSCHEDULABLE}
 * @param reason why it did not bind ("" when bound)
 * @param boundMs when its Binding succeeded, ms since the run's time zero
 * @param allocatedMs when its device plugin completed the hand-off and released the lock, ms since
 *     time zero
 */
public record MemberResult(
    String pod,
    boolean gangMember,
    int replica,
    String node,
    List<String> gpuUuids,
    int memoryMiB,
    int cores,
    double lockWaitMs,
    int lockAttempts,
    int binds,
    String result,
    String reason,
    Optional<Double> boundMs,
    Optional<Double> allocatedMs) {

  /** Validates and copies. */
  public MemberResult {
    Objects.requireNonNull(pod, "pod");
    Objects.requireNonNull(node, "node");
    gpuUuids = List.copyOf(gpuUuids);
    Objects.requireNonNull(result, "result");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(boundMs, "boundMs");
    Objects.requireNonNull(allocatedMs, "allocatedMs");
  }

  /**
   * @return whether the pod ended bound
   */
  public boolean bound() {
    return "BOUND".equals(result);
  }
}
