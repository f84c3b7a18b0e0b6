package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.preempt.NodePlan;
import dev.hamilock.device.spi.preempt.PreemptionPlanner;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.extender.v1.ExtenderPreemptionArgs;
import dev.hamilock.extender.v1.ExtenderPreemptionResult;
import dev.hamilock.extender.v1.MetaPod;
import dev.hamilock.extender.v1.MetaVictims;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The preempt verb ({@code preemptVerb: preempt}; kube-scheduler v1.37 {@code preemption.go}
 * callExtenders, which keeps only the nodes answered and does not re-check them): per node, kube's
 * victims plus the lower-priority pods {@link PreemptionPlanner} adds until the preemptor's GPU
 * request fits; a node where it never fits, or whose plan needs a pod on another node, is dropped.
 * A pod not served or asking for no device gets kube's victims unchanged. It evicts nothing.
 */
public final class ExtenderPreemption {
  private final HamiExtender served;
  private final ClusterReader reader;
  private final PodFitter fitter;
  private final PreemptionPlanner planner;
  private final RunningPods pods;

  /**
   * @param served the extender whose scheduler-name rule decides which pods are served
   * @param fitter the Filter's fitter (same vendors and policies)
   */
  public ExtenderPreemption(
      HamiExtender served, ClusterReader reader, PodFitter fitter, RunningPods pods) {
    this.served = Objects.requireNonNull(served, "served");
    this.reader = InterruptibleReader.wrap(Objects.requireNonNull(reader, "reader"));
    this.fitter = Objects.requireNonNull(fitter, "fitter");
    this.planner = new PreemptionPlanner(fitter, java.time.InstantSource.system());
    this.pods = Objects.requireNonNull(pods, "pods");
  }

  /**
   * @return per node kept, kube's victims then the added ones (most important first)
   * @throws RequestRejectedException naming the problem: no {@code Pod}, an unreadable pod or
   *     invalid device request, a victim without a UID, or a pod that is not stored (HTTP 400)
   * @throws ClusterException if a read failed (HTTP 500: kube-scheduler then fails the preemption
   *     unless the extender is {@code ignorable})
   */
  public ExtenderPreemptionResult preempt(ExtenderPreemptionArgs args)
      throws RequestRejectedException, ClusterException {
    Objects.requireNonNull(args, "args");
    if (args.pod().isEmpty()) {
      throw new RequestRejectedException("bad_request", HamiExtender.MISSING_POD);
    }
    Map<String, MetaVictims> kube =
        new LinkedHashMap<>(args.nodeNameToMetaVictims().orElse(Map.of()));
    for (var e : args.nodeNameToVictims().orElse(Map.of()).entrySet()) {
      List<MetaPod> uids = new ArrayList<>();
      for (var p : e.getValue().pods()) {
        String uid = p.path("metadata").path("uid").asText("");
        if (uid.isEmpty()) {
          throw new RequestRejectedException(
              "bad_request",
              "NodeNameToVictims[\""
                  + CallerMessages.safe(e.getKey())
                  + "\"]: a victim has no metadata.uid");
        }
        uids.add(new MetaPod(uid));
      }
      kube.put(e.getKey(), new MetaVictims(uids, e.getValue().numPDBViolations()));
    }
    PodView preemptor;
    try {
      preemptor = served.served.storedIfServed(JsonViews.podView(args.pod().get())).orElse(null);
      if (preemptor == null || !fitter.requests(preemptor).requestsDevices()) {
        return new ExtenderPreemptionResult(Optional.of(kube));
      }
    } catch (MalformedObjectException | InvalidPodRequestException e) {
      throw new RequestRejectedException("invalid_request", e.getMessage());
    }
    List<RunningPod> all = pods.all();
    DraObjects dra = reader.readDra(kube.keySet());
    Map<String, MetaVictims> out = new LinkedHashMap<>();
    for (var e : kube.entrySet()) {
      Optional<NodeView> node = reader.readNode(e.getKey());
      if (node.isEmpty()) {
        continue;
      }
      Set<String> gone = e.getValue().pods().stream().map(MetaPod::uid).collect(Collectors.toSet());
      List<RunningPod> left = all.stream().filter(p -> !gone.contains(p.pod().uid())).toList();
      NodePlan plan;
      try {
        plan =
            planner
                .plan(preemptor, preemptor.priority(), List.of(node.get()), left, List.of(), dra)
                .byNode()
                .get(e.getKey());
      } catch (InvalidPodRequestException ex) {
        throw new RequestRejectedException("invalid_request", ex.getMessage());
      }
      if (plan.outcome() == NodePlan.Outcome.FITS) {
        out.put(e.getKey(), e.getValue());
      } else if (plan.outcome() == NodePlan.Outcome.PREEMPT
          && plan.victims().stream().allMatch(v -> on(v.pod(), e.getKey()))) {
        List<MetaPod> victims = new ArrayList<>(e.getValue().pods());
        plan.victims().forEach(v -> victims.add(new MetaPod(v.pod().uid())));
        out.put(e.getKey(), new MetaVictims(victims, e.getValue().numPDBViolations()));
      }
    }
    return new ExtenderPreemptionResult(Optional.of(out));
  }

  /** The node a pod's usage counts on, as {@link PreemptionPlanner} places it. */
  private static boolean on(PodView pod, String node) {
    return pod.nodeName()
        .or(() -> Optional.ofNullable(pod.annotations().get(HamiAnnotations.VGPU_NODE)))
        .filter(node::equals)
        .isPresent();
  }
}
