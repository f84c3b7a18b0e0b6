package dev.hamilock.bind;

import dev.hamilock.device.spi.model.PodDevices;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The result of one {@link PodBinder#bind} call.
 *
 * @param node the target node
 * @param devices the allocation written (or attempted before a later step failed), if chosen
 * @param reason why it did not bind ("" for {@link BindOutcome#BOUND}); for {@link
 *     BindOutcome#DOES_NOT_FIT} HAMi's fit reasons, e.g. {@code 1/2 CardInsufficientMemory}
 * @param boundNode for {@link BindOutcome#ALREADY_BOUND}: the node the pod is bound to
 * @param failure why it did not bind; empty exactly for {@link BindOutcome#BOUND}
 * @param lockAttempts lock acquisition attempts (0 if no lock was needed or the bind ended before)
 * @param lockKeys the lock keys the pod needed, sorted
 * @param locksHeld whether the pod holds the node locks after the call (true for BOUND and UNKNOWN,
 *     and after a failure whose release itself failed)
 * @param cleanupProblems failures while clearing annotations or releasing locks (logged at WARN)
 */
public record BindResult(
    BindOutcome outcome,
    String namespace,
    String name,
    String node,
    Optional<PodDevices> devices,
    AllocationSource allocationSource,
    String reason,
    Optional<String> boundNode,
    Optional<FlowFailure> failure,
    BindTimings timings,
    int lockAttempts,
    List<String> lockKeys,
    boolean locksHeld,
    List<String> cleanupProblems) {

  /**
   * @throws NullPointerException if a component is null
   */
  public BindResult {
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(devices, "devices");
    Objects.requireNonNull(allocationSource, "allocationSource");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(boundNode, "boundNode");
    Objects.requireNonNull(failure, "failure");
    Objects.requireNonNull(timings, "timings");
    lockKeys = List.copyOf(lockKeys);
    cleanupProblems = List.copyOf(cleanupProblems);
  }

  /** {@return whether the pod is bound to {@link #node()}} */
  public boolean isBound() {
    return outcome == BindOutcome.BOUND;
  }

  /** {@return the failure's underlying exception, if any} */
  public Optional<Throwable> cause() {
    return failure.flatMap(FlowFailure::cause);
  }

  /** {@return {@code namespace/name}} */
  public String podKey() {
    return namespace + "/" + name;
  }
}
