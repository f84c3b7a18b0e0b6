package dev.hamilock.bind;

import dev.hamilock.bind.BindCall.Phase;
import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.VendorRegistry;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clean-up of a bind that does not end bound here: clear the allocation annotations (or restore
 * them if the pod turned out bound elsewhere), then release the locks by exact owner, and report.
 * It runs with the thread's interrupt flag cleared ({@link Uninterrupted}); what it could not undo
 * is recorded as a clean-up problem and logged at WARN.
 */
record Cleanup(ClusterWriter writer, VendorRegistry registry, BindLocks locks) {
  private static final Logger LOG = LoggerFactory.getLogger(PodBinder.class);

  /**
   * Clears what this call (or the Filter) wrote — unless the pod is gone — releases the locks and
   * reports {@code stop}.
   */
  BindResult fail(BindCall c, Stop stop) {
    return Uninterrupted.call(
        () -> {
          Subject s = c.subject();
          boolean written =
              c.annotated || AllocationAnnotations.hasAny(registry, s.vendors(), s.pod());
          MetadataPatch clear =
              written && stop.outcome() != BindOutcome.POD_NOT_FOUND
                  ? AllocationAnnotations.clearPatch(registry, s.vendors(), s.pod().uid())
                  : null;
          undo(c, clear, "cannot clear the allocation annotations of pod ");
          if (!c.problems.isEmpty()) {
            LOG.warn(
                "pod {} on node {}: bind failed ({}) and cleanup was incomplete: {}",
                c.podKey(),
                c.node,
                stop.reason(),
                c.problems);
          }
          return c.stopped(stop, Optional.empty());
        });
  }

  /**
   * The pod turned out bound to {@code other}: restore the annotations it had, release the locks,
   * report {@link BindOutcome#ALREADY_BOUND}.
   */
  BindResult boundElsewhere(BindCall c, Optional<String> other, BindingPostResult b) {
    return Uninterrupted.call(
        () -> {
          Subject s = c.subject();
          MetadataPatch restore =
              c.annotated
                  ? AllocationAnnotations.restorePatch(registry, s.vendors(), s.pod())
                  : null;
          undo(c, restore, "cannot restore the annotations of pod ");
          String why = "pod " + c.podKey() + " is bound to node " + other.orElse("?");
          FlowFailure failure =
              new FlowFailure(
                  FlowFailure.Kind.ALREADY_BOUND,
                  why + ": " + b.detail(),
                  b.httpStatus(),
                  b.cause());
          return c.stopped(new Stop(BindOutcome.ALREADY_BOUND, failure), other);
        });
  }

  /** Applies {@code patch} (if any), releases the locks, records problems and the duration. */
  private void undo(BindCall c, MetadataPatch patch, String problem) {
    Instant began = c.now();
    if (patch != null) {
      try {
        writer.patchPodMetadata(c.ns, c.name, patch);
        c.annotated = false;
      } catch (ClusterException e) {
        if (e.kind() != ClusterException.Kind.NOT_FOUND) {
          c.problems.add(problem + c.podKey() + ": " + e.getMessage());
        }
      }
    }
    locks.release(c);
    c.took(Phase.CLEANUP, began);
  }
}
