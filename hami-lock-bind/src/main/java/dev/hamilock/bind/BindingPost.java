package dev.hamilock.bind;

import dev.hamilock.bind.BindCall.Phase;
import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterWriter;
import java.time.Instant;
import java.util.Optional;

/**
 * Steps 5 and 6 of {@link PodBinder}: confirm the locks, POST the Binding (as HAMi's {@code
 * pkg/scheduler/scheduler.go} Bind) with the pod's last written resourceVersion as a precondition,
 * so a lost answer can be proven dead ({@link AmbiguousBinding}); anything but bound here (a 409 is
 * a plain FAILED kube-scheduler retries) goes to the clean-up.
 */
record BindingPost(
    ClusterWriter writer, BindLocks locks, Cleanup cleanup, AmbiguousBinding ambiguous) {
  /** For a call whose locks are held and allocation written (or a pod needing neither). */
  BindResult post(BindCall c) {
    Optional<Stop> lost = locks.confirmed(c);
    if (lost.isPresent()) {
      return cleanup.fail(c, lost.get());
    }
    Instant began = c.now();
    BindingPostResult b = writer.bind(c.ns, c.name, c.subject().pod().uid(), c.podVersion, c.node);
    c.took(Phase.BINDING, began);
    String binding = "binding pod " + c.podKey() + " to " + c.node;
    return switch (b.kind()) {
      case BOUND -> c.bound(Optional.empty());
      case ALREADY_BOUND ->
          b.boundNode().filter(c.node::equals).isPresent()
              ? c.bound(Optional.empty())
              : cleanup.boundElsewhere(c, b.boundNode(), b);
      case NOT_FOUND ->
          cleanup.fail(
              c,
              new Stop(BindOutcome.POD_NOT_FOUND, FlowFailure.of(binding + ": " + b.detail(), b)));
      case REJECTED, CONFLICT ->
          cleanup.fail(
              c,
              new Stop(
                  BindOutcome.FAILED, FlowFailure.of(binding + " was rejected: " + b.detail(), b)));
      case AMBIGUOUS -> ambiguous.resolve(c, began, b);
    };
  }
}
