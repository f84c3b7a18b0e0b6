package dev.hamilock.bind;

import dev.hamilock.bind.BindCall.Phase;
import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterWriter;
import java.time.Instant;
import java.util.Optional;

/**
 * Steps 5 and 6 of {@link PodBinder}: confirm every held lock ({@link BindLocks#confirm}), POST the
 * Binding ({@code pods/binding}, as HAMi's {@code pkg/scheduler/scheduler.go} Bind and
 * kube-scheduler's {@code DefaultBinder} do, but with the pod's resourceVersion as this call last
 * wrote it as a precondition, so that a Binding whose answer is lost can be proven dead: {@link
 * AmbiguousBinding}) and map its answer: bound (here, or already here) ⇒ {@link BindOutcome#BOUND}
 * with the locks kept for the device plugin; already bound elsewhere, gone, rejected or the pod
 * written since (CONFLICT, a plain {@link BindOutcome#FAILED} kube-scheduler retries) ⇒ clean-up;
 * ambiguous ⇒ {@link AmbiguousBinding}.
 */
record BindingPost(
    ClusterWriter writer, BindLocks locks, Cleanup cleanup, AmbiguousBinding ambiguous) {
  /** For a call whose locks are held and allocation written (or a pod needing neither). */
  BindResult post(BindCall c) {
    Optional<Stop> lost = locks.confirm(c);
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
