package dev.hamilock.bind;

import dev.hamilock.bind.BindCall.Phase;
import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.VendorRegistry;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clean-up of a bind that does not end bound here: clear the allocation annotations (or restore
 * them if the pod turned out bound elsewhere), then release the locks by exact owner, and report.
 * It runs with the thread's interrupt flag cleared ({@link Uninterrupted}); what it could not undo
 * is recorded as a clean-up problem and logged at WARN.
 */
record Cleanup(
    ClusterReader reader, ClusterWriter writer, VendorRegistry registry, BindLocks locks) {
  private static final Logger LOG = LoggerFactory.getLogger(PodBinder.class);

  /**
   * Clears what this call (or the Filter) wrote — unless the pod is gone — releases the locks and
   * reports {@code stop}.
   */
  BindResult fail(BindCall c, Stop stop) {
    Subject s = c.subject();
    boolean written =
        c.annotated() || AllocationAnnotations.hasAny(registry, s.annotated(), s.pod());
    return fail(
        c, stop, written && stop.outcome() != BindOutcome.POD_NOT_FOUND ? clearPatch(c) : null);
  }

  /**
   * {@link #fail} after an ambiguous Binding whose pod was re-read unbound at the Binding's
   * resourceVersion: kube-apiserver may still apply that POST, so the clear patch, conditioned on
   * that version, moves the pod past it ({@link ClusterWriter#bind}) before the locks are released.
   *
   * @throws ClusterException if the clear patch did not apply (CONFLICT, UNAVAILABLE): nothing is
   *     released, the caller reads the pod again
   */
  BindResult failFenced(BindCall c, Stop stop) throws ClusterException {
    writer.patchPodMetadata(c.ns, c.name, clearPatch(c));
    return fail(c, stop, null);
  }

  private MetadataPatch clearPatch(BindCall c) {
    Subject s = c.subject();
    return AllocationAnnotations.clearPatch(registry, s.annotated(), s.pod().uid(), c.podVersion);
  }

  private BindResult fail(BindCall c, Stop stop, MetadataPatch clear) {
    return Uninterrupted.call(
        () -> {
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
              c.annotated()
                  ? AllocationAnnotations.restorePatch(
                      registry, s.annotated(), s.pod(), c.podVersion)
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

  /** Releases the locks only (nothing written to undo) and returns {@code r}. */
  BindResult releaseOnly(BindCall c, BindResult r) {
    undo(c, null, "");
    return r;
  }

  /**
   * Applies {@code patch} (if any), releases the locks, records problems and the duration. On
   * CONFLICT the pod is re-read once and patched at the new version only if {@link #stillOurs};
   * anything else was written after this call and is left alone.
   */
  private void undo(BindCall c, MetadataPatch patch, String problem) {
    Instant began = c.now();
    if (patch != null) {
      try {
        try {
          writer.patchPodMetadata(c.ns, c.name, patch);
        } catch (ClusterException e) {
          if (e.kind() != ClusterException.Kind.CONFLICT) {
            throw e;
          }
          Optional<ClusterPod> now = reader.readPod(c.ns, c.name);
          if (now.isEmpty() || !stillOurs(c, now.get())) {
            LOG.debug("pod {} changed since this bind wrote it: left as it is", c.podKey());
          } else {
            writer.patchPodMetadata(c.ns, c.name, patch.at(now.get().resourceVersion()));
          }
        }
      } catch (ClusterException e) {
        if (e.kind() != ClusterException.Kind.NOT_FOUND) {
          c.problems.add(problem + c.podKey() + ": " + e.getMessage());
        }
      }
    }
    locks.release(c);
    c.took(Phase.CLEANUP, began);
  }

  /**
   * Unbound, and the allocation keys hold what this call may have written (its last allocation
   * patch, applied or not, or the one before it answered as applied) or what step 1 read.
   */
  private boolean stillOurs(BindCall c, ClusterPod now) {
    if (now.isBound()) {
      return false;
    }
    Set<String> keys = AllocationAnnotations.annotationKeys(registry, c.subject().annotated());
    Map<String, String> has = now.view().annotations();
    Map<String, String> read = c.subject().pod().annotations();
    boolean asRead = keys.stream().allMatch(k -> Objects.equals(has.get(k), read.get(k)));
    return asRead
        || Stream.of(c.written, c.applied)
            .flatMap(Optional::stream)
            .anyMatch(
                w ->
                    keys.stream()
                        .allMatch(
                            k ->
                                Objects.equals(
                                    has.get(k),
                                    w.annotations()
                                        .getOrDefault(k, Optional.ofNullable(read.get(k)))
                                        .orElse(null))));
  }
}
