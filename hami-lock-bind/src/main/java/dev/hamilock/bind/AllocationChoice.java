package dev.hamilock.bind;

import dev.hamilock.bind.BindCall.Phase;
import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.bind.PodBinder.Rescore;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ForkedRead;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 3 of {@link PodBinder}, under the locks: fresh usage decides between the Filter's allocation
 * (kept, re-scored or trusted unchecked), a re-fit and DOES_NOT_FIT, unless another pod is still in
 * flight on the node ({@link #inFlight}: CONTENDED). The reads are issued after the locks were
 * taken, or beside the lock attempt conditioned on a node version ({@link #start}; used only if the
 * lock was won at it); with an executor they run side by side ({@link ForkedRead}).
 *
 * @param warned the unparsable bind times already logged at WARN, at most {@link #WARNED_MAX}
 */
record AllocationChoice(
    ClusterReader reader,
    VendorRegistry registry,
    PodFitter fitter,
    UsageReconstructor usage,
    boolean refitUnderLock,
    Rescore rescore,
    Set<String> warned) {
  private static final Logger LOG = LoggerFactory.getLogger(PodBinder.class);
  private static final int WARNED_MAX = 1024;

  /**
   * Chooses the allocation and records it (and the step's duration) on {@code c}.
   *
   * @return empty when chosen, else why the walk stops (NODE_NOT_FOUND, FAILED, DOES_NOT_FIT)
   */
  Optional<Stop> choose(BindCall c, PodRequests requests, Executor executor) {
    Instant began = c.now();
    try {
      return chooseTimed(c, requests, executor);
    } finally {
      c.took(Phase.REFIT, began);
    }
  }

  /**
   * The reads of one choice, in flight at once; {@code version}: see {@link #start}; {@code pods}
   * empty for a call that writes first ({@link BindCall#writeFirst}: listed after its write, at its
   * version), whose {@code dra} is then a snapshot to confirm ({@link #confirmed}).
   */
  record Reads(
      Optional<String> version,
      FutureTask<Optional<NodeView>> node,
      Optional<FutureTask<List<ClusterPod>>> pods,
      FutureTask<DraObjects> dra) {}

  /**
   * Starts the reads on {@code executor} beside the lock attempt conditioned on node version {@code
   * version} (pods too: the attempt's thread is busy with the lock's PATCH).
   */
  Reads start(BindCall c, String version, Executor executor) {
    return start(c, Optional.of(version), executor, executor);
  }

  private Reads start(BindCall c, Optional<String> version, Executor executor, Executor pods) {
    boolean first = c.writeFirst.isPresent();
    return new Reads(
        version,
        ForkedRead.start(
            executor,
            () -> {
              // the node as the winning attempt saw it free, or as this attempt will
              Optional<String> at = version.or(() -> c.lockedAt);
              return at.isPresent() ? reader.readNode(c.node, at.get()) : reader.readNode(c.node);
            }),
        first
            ? Optional.empty()
            : Optional.of(
                ForkedRead.start(pods, () -> reader.listPodsAssignedTo(c.node, executor))),
        // after the lock, or beside it at a version: a claim allocated since the Filter is counted
        ForkedRead.start(
            executor,
            () ->
                first
                    ? reader.readDraForFilter(List.of(c.node))
                    : reader.readDra(List.of(c.node), executor)));
  }

  /**
   * The snapshot {@code dra} if it shows no DRA device on the node (no ResourceSlice of it, no
   * claim allocated on it) and holds every claim of the pod being bound and of the node's {@code
   * others} in its final state ({@link DraObjects#unconfirmedClaim}), else a consistent read. Why:
   * kube-scheduler writes a claim's allocation and {@code reservedFor} in one status update at
   * PreBind ({@code bindClaim}, {@code dynamicresources.go}, v1.37.2), before it calls the
   * extender's {@code /bind} and so before that pod takes the lock, and an allocation never changes
   * once set; the claims of pods that never take the lock (wholly DRA) are unordered with this bind
   * under either read, and a node where DRA publishes devices is read consistently so that a
   * lagging snapshot cannot hide one written long before (SCHEDULER.md, "What the DRA reads must
   * follow").
   */
  private DraObjects confirmed(BindCall c, DraObjects dra, List<PodView> others, Executor executor)
      throws ClusterException {
    List<PodView> pods = new ArrayList<>(others);
    pods.add(c.subject().pod());
    Optional<String> unconfirmed =
        dra.devicesOn(c.node) ? Optional.of("DRA devices on the node") : dra.unconfirmedClaim(pods);
    if (unconfirmed.isEmpty()) {
      return dra;
    }
    LOG.debug(
        "node {}: DRA snapshot not confirmed ({}); reading consistently", c.node, unconfirmed);
    return reader.readDra(List.of(c.node), executor);
  }

  /**
   * The pods at {@link BindCall#listedAt}, else (or if that fails UNAVAILABLE: kube-apiserver
   * answers 504 when its watch cache has not reached the version within 3 s) a consistent list.
   */
  private List<ClusterPod> listedAt(BindCall c, Executor executor) throws ClusterException {
    if (c.listedAt.isPresent()) {
      try {
        return reader.listPodsAssignedTo(c.node, executor, c.listedAt.get());
      } catch (ClusterException e) {
        if (e.kind() != ClusterException.Kind.UNAVAILABLE) {
          throw e;
        }
        LOG.debug("node {}: pods at version {} unavailable ({})", c.node, c.listedAt.get(), e);
      }
    }
    return reader.listPodsAssignedTo(c.node, executor);
  }

  private Optional<Stop> chooseTimed(BindCall c, PodRequests requests, Executor executor) {
    Subject s = c.subject();
    NodeView nodeView;
    List<PodView> others = new ArrayList<>();
    DraObjects dra;
    DraObjects snapshot;
    // reads started beside the winning attempt, else now (this thread lists the pods)
    Reads reads =
        c.early
            .filter(r -> c.lockedAt.isPresent() && r.version().equals(c.lockedAt))
            .orElseGet(() -> start(c, Optional.empty(), executor, null));
    try {
      List<ClusterPod> pods =
          reads.pods().isPresent() ? ForkedRead.join(reads.pods().get()) : listedAt(c, executor);
      for (ClusterPod other : pods) {
        if (!(other.view().namespace().equals(c.ns) && other.view().name().equals(c.name))) {
          others.add(other.view());
        }
      }
      Optional<Stop> inFlight = inFlight(c, others);
      if (inFlight.isPresent()) {
        return inFlight;
      }
      nodeView = ForkedRead.join(reads.node()).orElse(null);
      if (nodeView == null) {
        return Optional.of(
            new Stop(BindOutcome.NODE_NOT_FOUND, "node " + c.node + " not found", null));
      }
      snapshot = ForkedRead.join(reads.dra());
      dra = reads.pods().isEmpty() ? confirmed(c, snapshot, others, executor) : snapshot;
    } catch (ClusterException e) {
      String why = "cannot read the usage of node " + c.node + ": " + e.getMessage();
      return Optional.of(new Stop(BindOutcome.FAILED, why, e));
    }
    NodeUsage nodeUsage = usage.nodeUsage(nodeView, others, dra);
    if (reads.pods().isEmpty() // a snapshot used as it was, not yet read consistently
        && dra == snapshot
        && nodeUsage.status() == NodeUsage.Status.USAGE_UNKNOWN
        && !dra.claims().isEmpty()) {
      try { // a lagging snapshot may lack the slice that resolves a confirmed claim's device
        nodeUsage = usage.nodeUsage(nodeView, others, reader.readDra(List.of(c.node), executor));
      } catch (ClusterException e) {
        String why = "cannot read the usage of node " + c.node + ": " + e.getMessage();
        return Optional.of(new Stop(BindOutcome.FAILED, why, e));
      }
    }
    StringBuilder problem = new StringBuilder();
    Optional<PodDevices> recorded =
        AllocationAnnotations.recorded(registry, s.vendors(), s.pod(), c.node, problem);
    if (problem.length() > 0) {
      LOG.debug("pod {}: ignoring its recorded allocation: {}", s.owner(), problem);
    }
    if (!refitUnderLock && recorded.isPresent()) {
      c.allocated(recorded.get(), AllocationSource.UNCHECKED);
      return Optional.empty();
    }
    String why = "";
    if (recorded.isPresent()) {
      Optional<String> misfit =
          AllocationCheck.verify(registry, requests, nodeUsage, recorded.get());
      if (misfit.isEmpty()) {
        rescore(c, requests, nodeUsage, recorded.get());
        return Optional.empty();
      }
      why = "the Filter's allocation no longer fits (" + misfit.get() + "); ";
      LOG.debug("pod {} on node {}: {}", s.owner(), c.node, why);
    }
    NodeFit fit = fitter.fit(requests, nodeUsage, FitContext.newMemo());
    if (!fit.fits()) {
      String reason = why + "node " + c.node + ": " + fit.reason();
      return Optional.of(new Stop(BindOutcome.DOES_NOT_FIT, reason, null));
    }
    c.allocated(fit.devices(), AllocationSource.REFITTED);
    return Optional.empty();
  }

  /**
   * The hand-off guard, before any write: another Pending pod on the node, bind phase {@code
   * allocating}, {@code hami.io/bind-time} younger than the lock timeout, still waits for its
   * device plugin without a lock, and HAMi's plugin (spec §3.1) would serve each pod the other's
   * allocation. Any other state does not block, so a pod left {@code allocating} holds the node
   * back one lock timeout at most.
   *
   * @return CONTENDED naming the pod in flight, else empty
   */
  private Optional<Stop> inFlight(BindCall c, List<PodView> others) {
    long timeout = c.held.stream().mapToLong(l -> l.lockTimeout().toSeconds()).max().orElse(0);
    long now = c.now().getEpochSecond();
    for (PodView p : others) {
      String time = p.annotations().get(HamiAnnotations.BIND_TIME);
      if (p.phase() != PodView.Phase.PENDING
          || p.deleting() // kubelet starts no container of a pod being deleted: no Allocate
          || p.nodeName().filter(n -> !n.equals(c.node)).isPresent()
          || !AllocationAnnotations.PHASE_ALLOCATING.equals(
              p.annotations().get(HamiAnnotations.BIND_PHASE))
          || time == null) {
        continue;
      }
      long bound;
      try {
        bound = Long.parseLong(time);
      } catch (NumberFormatException e) {
        if (warned.size() > WARNED_MAX) {
          warned.clear();
        }
        if (warned.add(p.key() + "=" + time)) {
          LOG.warn(
              "pod {} on node {}: unparsable {} \"{}\" (Unix seconds expected); not counted as"
                  + " waiting for the device plugin",
              p.key(),
              c.node,
              HamiAnnotations.BIND_TIME,
              time);
        }
        continue;
      }
      if (Math.abs(now - bound) < timeout) {
        String why =
            ("pod %s is still waiting for the device plugin on node %s (bind phase allocating,"
                    + " bind time %s, no lock of its own): binding pod %s now could hand each pod"
                    + " the other's allocation")
                .formatted(p.key(), c.node, time, c.podKey());
        LOG.debug("{}", why);
        return Optional.of(new Stop(BindOutcome.CONTENDED, why, null));
      }
    }
    return Optional.empty();
  }

  /** The Filter's allocation still fits: keep it, or the policy's choice for covered pods. */
  private void rescore(BindCall c, PodRequests requests, NodeUsage nodeUsage, PodDevices recorded) {
    Subject s = c.subject();
    boolean covered = rescore == Rescore.ALL || (rescore == Rescore.GANG_MEMBERS && s.gang());
    if (covered) {
      NodeFit fresh = fitter.fit(requests, nodeUsage, FitContext.newMemo());
      if (fresh.fits() && !uuids(fresh.devices()).equals(uuids(recorded))) {
        LOG.debug(
            "pod {} on node {}: the policy now picks {} instead of the Filter's {} (re-scored"
                + " under the lock)",
            s.owner(),
            nodeUsage.name(),
            uuids(fresh.devices()),
            uuids(recorded));
        c.allocated(fresh.devices(), AllocationSource.RESCORED);
        return;
      }
    }
    c.allocated(recorded, AllocationSource.FILTER_KEPT);
  }

  /** Every container's devices of every vendor, by UUID in order: equal for the same choice. */
  static Map<String, List<List<String>>> uuids(PodDevices d) {
    Map<String, List<List<String>>> out = new TreeMap<>();
    d.byVendor()
        .forEach(
            (v, containers) ->
                out.put(
                    v,
                    containers.stream()
                        .map(cs -> cs.stream().map(ContainerDevice::uuid).toList())
                        .toList()));
    return out;
  }
}
