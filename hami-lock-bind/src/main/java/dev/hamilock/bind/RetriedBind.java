package dev.hamilock.bind;

import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pod of {@link PodBinder} found bound already (step 1, or the re-read after step 4's
 * precondition failed): a bind kube-scheduler retried after it went through ({@code
 * pkg/scheduler/schedule_one.go}, kubernetes#96579) is {@link BindOutcome#BOUND} with {@link
 * AllocationSource#ALREADY_RECORDED}, nothing written; bound elsewhere, or here without this flow's
 * allocation, is {@link BindOutcome#ALREADY_BOUND}.
 */
record RetriedBind(
    PodFitter fitter, VendorRegistry registry, ClusterReader reader, Cleanup cleanup) {
  private static final Logger LOG = LoggerFactory.getLogger(PodBinder.class);

  /** BOUND for a retried bind of this flow onto {@code c.node}, else ALREADY_BOUND. */
  BindResult answer(BindCall c, ClusterPod cp) {
    String boundTo = cp.nodeName().get();
    String already = "pod " + c.podKey() + " is already bound to node " + boundTo;
    if (!boundTo.equals(c.node)) {
      return c.stopped(
          new Stop(BindOutcome.ALREADY_BOUND, already + ", not " + c.node, null), cp.nodeName());
    }
    Retried retried = check(c.node, cp.view());
    if (retried.problem().isPresent()) {
      String why = already + " but not by this bind flow: " + retried.problem().get();
      return c.stopped(new Stop(BindOutcome.ALREADY_BOUND, why, null), cp.nodeName());
    }
    LOG.debug(
        "pod {} is already bound to node {} by this flow: retried bind answered as bound "
            + "(kubernetes#96579), no lock taken",
        c.podKey(),
        c.node);
    retried.devices().ifPresent(d -> c.allocated(d, AllocationSource.ALREADY_RECORDED));
    return c.bound(cp.nodeName());
  }

  /**
   * The pod was bound by someone else after step 1: answered as a retried bind, nothing written or
   * cleared; the locks stay for a hand-off still to come (bind phase {@code allocating}), else go.
   */
  BindResult boundMeanwhile(BindCall c, ClusterPod cp) {
    BindResult r = answer(c, cp);
    boolean handoffToCome =
        r.outcome() == BindOutcome.BOUND
            && AllocationAnnotations.PHASE_ALLOCATING.equals(
                cp.view().annotations().get(HamiAnnotations.BIND_PHASE));
    return handoffToCome ? r : Uninterrupted.call(() -> cleanup.releaseOnly(c, r));
  }

  /**
   * Step 4's patch met a pod changed since step 1 (nothing written). Re-read once: another
   * incarnation (re-created under the name) ⇒ POD_NOT_FOUND, the one asked for is gone; bound ⇒
   * recorded for {@link #boundMeanwhile}; else CONTENDED, the allocation decided again on the next
   * attempt.
   */
  Optional<Stop> changedMeanwhile(BindCall c, ClusterException conflict) {
    try {
      Optional<ClusterPod> now = reader.readPod(c.ns, c.name);
      String uid = c.subject().pod().uid();
      if (now.isPresent() && !uid.isBlank() && !uid.equals(now.get().view().uid())) {
        String why =
            "pod %s was re-created (uid %s, not %s) after its allocation write conflicted"
                .formatted(c.podKey(), now.get().view().uid(), uid);
        return Optional.of(
            new Stop(BindOutcome.POD_NOT_FOUND, FlowFailure.of(FlowFailure.Kind.NOT_FOUND, why)));
      }
      if (now.isPresent() && now.get().isBound()) {
        c.boundMeanwhile = now;
        return Optional.empty();
      }
    } catch (ClusterException e) {
      String why = "cannot re-read pod " + c.podKey() + " after a conflict: " + e.getMessage();
      return Optional.of(new Stop(BindOutcome.FAILED, why, e));
    }
    String why =
        "pod %s changed since it was read (%s): its allocation is decided again on the next attempt"
            .formatted(c.podKey(), conflict.getMessage());
    return Optional.of(new Stop(BindOutcome.CONTENDED, why, conflict));
  }

  /** {@code problem} empty if consistent (then {@code devices} is the recorded allocation). */
  record Retried(Optional<String> problem, Optional<PodDevices> devices) {
    static Retried inconsistent(String problem) {
      return new Retried(Optional.of(problem), Optional.empty());
    }
  }

  /**
   * Whether a pod bound to {@code node} carries this flow's allocation (a pod requesting no device
   * needs none): {@code hami.io/vgpu-node} the node, bind phase {@code allocating} or {@code
   * success}, a bind time, and per vendor one decoded entry per container with the requested device
   * count.
   */
  Retried check(String node, PodView pod) {
    PodRequests asked;
    try {
      asked = fitter.requests(pod);
    } catch (InvalidPodRequestException e) {
      return Retried.inconsistent("its requests cannot be parsed: " + e.getMessage());
    }
    Subject s = Subject.of(pod, asked, registry);
    if (s.needsNothing()) {
      return new Retried(Optional.empty(), Optional.empty());
    }
    Map<String, String> a = pod.annotations();
    String assigned = a.get(HamiAnnotations.VGPU_NODE);
    if (!node.equals(assigned)) {
      return Retried.inconsistent(HamiAnnotations.VGPU_NODE + "=" + assigned);
    }
    String phase = a.get(HamiAnnotations.BIND_PHASE);
    if (!AllocationAnnotations.PHASE_ALLOCATING.equals(phase)
        && !AllocationAnnotations.PHASE_SUCCESS.equals(phase)) {
      return Retried.inconsistent(HamiAnnotations.BIND_PHASE + "=" + phase);
    }
    if (!a.containsKey(HamiAnnotations.BIND_TIME)) {
      return Retried.inconsistent(HamiAnnotations.BIND_TIME + " absent");
    }
    StringBuilder problem = new StringBuilder();
    Optional<PodDevices> rec =
        AllocationAnnotations.recorded(registry, s.vendors(), pod, node, problem);
    if (rec.isEmpty()) {
      return Retried.inconsistent(
          problem.length() > 0 ? problem.toString() : "an allocated annotation is absent");
    }
    return countMismatch(s, s.served().perContainer(), rec.get())
        .map(Retried::inconsistent)
        .orElseGet(() -> new Retried(Optional.empty(), rec));
  }

  /** The first vendor whose recorded entries disagree with the requested device counts. */
  private static Optional<String> countMismatch(
      Subject s, List<Map<String, ContainerDeviceRequest>> per, PodDevices rec) {
    for (String v : s.vendors()) {
      List<List<ContainerDevice>> entries = rec.forVendor(v);
      if (entries.size() != per.size()) {
        return Optional.of(
            "the %s allocation has %d container entries, the pod has %d containers"
                .formatted(v, entries.size(), per.size()));
      }
      for (int ci = 0; ci < per.size(); ci++) {
        ContainerDeviceRequest r = per.get(ci).get(v);
        int want = r == null ? 0 : r.nums();
        if (entries.get(ci).size() != want) {
          return Optional.of(
              "container %d requests %d %s device(s), the allocation gives %d"
                  .formatted(ci, want, v, entries.get(ci).size()));
        }
      }
    }
    return Optional.empty();
  }
}
