package dev.hamilock.bind;

import dev.hamilock.bind.BindCall.Phase;
import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 6's ambiguous answer (timeout, 5xx; HAMi#2645): the pod, re-read up to {@code rereads}
 * times, tells whether the Binding went through. A pod read unbound is not proof (kube-apiserver
 * may still apply the POST): the Binding names the pod's resourceVersion, so a pod still at it is
 * first moved past it ({@link Cleanup#failFenced}). The re-reads run {@link Uninterrupted}: a POST
 * cut short by an interrupt is ambiguous exactly then.
 */
record AmbiguousBinding(ClusterReader reader, Cleanup cleanup, int rereads) {
  private static final Logger LOG = LoggerFactory.getLogger(PodBinder.class);

  /** {@code bindingStart}: when the POST began (the binding phase includes the re-reads). */
  BindResult resolve(BindCall c, Instant bindingStart, BindingPostResult b) {
    return Uninterrupted.call(() -> reread(c, bindingStart, b));
  }

  private BindResult reread(BindCall c, Instant bindingStart, BindingPostResult b) {
    String detail = b.detail();
    ClusterException last = null;
    for (int i = 0; i < rereads; i++) {
      Optional<ClusterPod> read;
      try {
        read = reader.readPod(c.ns, c.name);
      } catch (ClusterException e) {
        last = e;
        continue;
      } finally {
        c.took(Phase.BINDING, bindingStart);
      }
      String uid = c.subject().pod().uid();
      if (read.isEmpty() || (!uid.isEmpty() && !uid.equals(read.get().view().uid()))) {
        String why =
            "pod " + c.podKey() + " disappeared during an ambiguous binding (" + detail + ")";
        FlowFailure gone =
            new FlowFailure(FlowFailure.Kind.NOT_FOUND, why, b.httpStatus(), b.cause());
        return cleanup.fail(c, new Stop(BindOutcome.POD_NOT_FOUND, gone));
      }
      if (read.get().nodeName().filter(c.node::equals).isPresent()) {
        LOG.debug("pod {}: ambiguous binding ({}) turned out applied", c.podKey(), detail);
        return c.bound(Optional.empty());
      }
      if (read.get().isBound()) {
        return cleanup.boundElsewhere(c, read.get().nodeName(), b);
      }
      String why = "binding pod " + c.podKey() + " to " + c.node + " was not applied: " + detail;
      Stop stop = new Stop(BindOutcome.FAILED, FlowFailure.of(why, b));
      if (!c.annotated() || !c.podVersion.equals(read.get().resourceVersion())) {
        return cleanup.fail(c, stop); // past the Binding's resourceVersion: it can never apply
      }
      try {
        return cleanup.failFenced(c, stop); // the Binding may still land: move the pod past it
      } catch (ClusterException e) {
        last = e; // changed meanwhile (maybe bound by it) or unknown: read again
      }
    }
    String why =
        "binding pod %s to %s has an unknown outcome (%s) and the pod could not be re-read and"
            + " moved past the Binding's resourceVersion%s";
    why = why.formatted(c.podKey(), c.node, detail, last == null ? "" : ": " + last.getMessage());
    LOG.warn("{}; leaving its locks and allocation annotations in place", why);
    FlowFailure unknown =
        new FlowFailure(
            FlowFailure.Kind.UNAVAILABLE,
            why,
            b.httpStatus(),
            last != null ? Optional.of(last) : b.cause());
    return c.stopped(new Stop(BindOutcome.UNKNOWN, unknown), Optional.empty());
  }
}
