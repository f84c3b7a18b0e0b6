package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.KubernetesWire.ClusterCall;
import dev.hamilock.core.internal.CheckedExecutor;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.preempt.MemberPlan;
import dev.hamilock.device.spi.preempt.NodePlan;
import dev.hamilock.device.spi.preempt.PreemptionPlanner;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Preemption by the extender itself, for a pod kube-scheduler cannot preempt for because it does
 * not see GPU slices (HAMi#1527): opt-in, asynchronous (the Filter only {@link #submit}s). A worker
 * re-fits the pod on every node kube-scheduler filtered it on ({@link #filtered}: if one fits
 * without victims nothing is evicted), counting the cards ResourceClaims hold, plans with {@link
 * PreemptionPlanner}, reserves the freed slices, evicts the victims and records Events.
 *
 * <p><b>Who may start it.</b> A /filter request proves nothing, so the worker reads the preemptor
 * fresh: unbound, not terminating, same UID, policy not {@code Never}, and marked {@code
 * PodScheduled=False/Unschedulable} by kube-scheduler ({@link PodView#unschedulable()};
 * k8s.io/kubernetes v1.37 {@code pkg/scheduler/schedule_one.go} handleSchedulingFailure). That is
 * written after the failed cycle, so usually the attempt after the backoff ({@code
 * scheduling_queue.go} {@code queueAfterBackoff}, 1 s at first) evicts.
 *
 * <p>Events as kube-scheduler v1.37 ({@code framework/preemption/preemption.go} prepareCandidate):
 * Normal {@code Preempted} on each victim, {@code Preempting} on the preemptor; unlike it, victims
 * go through the Eviction API ({@link ClusterWriter#evictPod}, PDBs honoured). A 429 (Warning
 * {@code PreemptionRefused}) keeps that pod and plans again, at most {@value #MAX_PLANS} plans; a
 * victim whose eviction failed otherwise is passed over if a fresh read finds it gone or
 * re-created, else the failure stands.
 *
 * <p><b>The reservation</b>, written before any eviction in one merge patch on the preemptor:
 * HAMi's Filter annotations for the planned node and cards plus {@value
 * UsageReconstructor#RESERVATION} = {@code <node>,<expiry RFC 3339 UTC>}, with the {@code
 * resourceVersion} as read as the compare-and-set token between replicas (the loser gets 409 and
 * evicts nothing). It holds {@link #DEFAULT_HOLD}; expired, no usage reader counts it ({@link
 * UsageReconstructor#podUsage(PodView)}). A live reservation of a lower-priority preemptor on the
 * node is dropped (expiry now, Event {@code PreemptionReservationDropped}), as kube-scheduler
 * clears lower nominations; one of equal or higher priority counts and is never touched.
 *
 * <p><b>A gang preemptor</b> ({@link RunningPod#gang()}) is planned with its gang's other pending
 * members (read fresh; one of policy {@code Never} or holding a live reservation stops it) by
 * {@link PreemptionPlanner#planGang} at the lowest member's priority, on the nodes recorded for any
 * member: all placed or nobody evicted. Each member is reserved (a 409 releases those written),
 * then the union of victims is evicted; a refusal evicts nothing further and releases the
 * reservations. A lone pod is a gang of one. Thread-safe.
 */
public final class GpuPreemption {
  private static final Logger LOG = LoggerFactory.getLogger(GpuPreemption.class);

  /** How long a reservation holds: kube-scheduler's podMaxInUnschedulablePodsDuration. */
  public static final Duration DEFAULT_HOLD = Duration.ofMinutes(5);

  /** Plans tried for one preemptor when budgets refuse evictions. */
  static final int MAX_PLANS = 3;

  private final ClusterReader reader;
  private final PreemptionWrites writes;
  private final PreemptionPlanner planner;
  private final ClusterCall<List<RunningPod>> running;
  private final ClusterCall<List<NodeView>> clusterNodes;
  private final ClusterCall<List<PodView>> unbound;

  /** Per pod UID, the nodes its /filter requests named; the least recently filtered first. */
  private final Map<String, Set<String>> filtered = new LinkedHashMap<>(16, 0.75f, true);

  /** UIDs whose record was dropped from {@link #filtered}: never preempted for, incomplete. */
  private final Set<String> forgotten = Collections.newSetFromMap(new LinkedHashMap<>());

  private final Executor executor;
  private final int capacity;
  private final Duration hold;
  private final InstantSource clock;
  private final Set<String> queued = ConcurrentHashMap.newKeySet();

  /**
   * @param running the placed pods with priorities and start times (e.g. the extender's {@code
   *     RunningPods::all})
   * @param clusterNodes every node, registrations in their annotations (e.g. an informer cache)
   * @param unbound the unbound pods (e.g. an informer cache): where gang members are found
   * @param executor where plans run (never the Filter's thread)
   * @param capacity pods queued or running at most, &ge; 1
   * @param hold how long a reservation holds, positive (e.g. {@link #DEFAULT_HOLD})
   * @throws IllegalArgumentException naming a capacity below 1 or a hold not positive
   */
  public GpuPreemption(
      ClusterReader reader,
      ClusterWriter writer,
      PodFitter fitter,
      ClusterCall<List<RunningPod>> running,
      ClusterCall<List<NodeView>> clusterNodes,
      ClusterCall<List<PodView>> unbound,
      Executor executor,
      int capacity,
      Duration hold,
      InstantSource clock) {
    this.reader = StackPorts.checked(Objects.requireNonNull(reader, "reader"), null);
    this.writes =
        new PreemptionWrites(
            this.reader,
            StackPorts.checked(null, Objects.requireNonNull(writer, "writer")),
            Objects.requireNonNull(fitter, "fitter").registry(),
            Objects.requireNonNull(clock, "clock"));
    this.clock = clock;
    this.planner = new PreemptionPlanner(fitter, clock);
    this.running = checked("the running pods", Objects.requireNonNull(running, "running"));
    this.clusterNodes =
        checked("the cluster's nodes", Objects.requireNonNull(clusterNodes, "clusterNodes"));
    this.unbound = checked("the unbound pods", Objects.requireNonNull(unbound, "unbound"));
    this.executor = CheckedExecutor.of(executor); // its other unchecked exceptions: rejections
    checkArgument(capacity >= 1, "capacity must be >= 1: %s", capacity);
    this.capacity = capacity;
    checkArgument(!hold.isNegative() && !hold.isZero(), "hold must be positive: %s", hold);
    this.hold = hold;
  }

  /**
   * Where a supplier enters, as a cluster port's call enters through {@code ForwardingCluster}: its
   * unchecked exception or a null answer is {@link ClusterException.Kind#UNAVAILABLE}.
   */
  private static <T> ClusterCall<T> checked(String what, ClusterCall<T> call) {
    return () -> {
      T answer;
      try {
        answer = call.call();
      } catch (RuntimeException e) {
        String why = "reading " + what + " failed: " + call + " threw " + e;
        throw new ClusterException(ClusterException.Kind.UNAVAILABLE, why, e);
      }
      if (answer == null) {
        String why = "reading " + what + " failed: " + call + " answered null";
        throw new ClusterException(ClusterException.Kind.UNAVAILABLE, why, null);
      }
      return answer;
    };
  }

  /**
   * Records the nodes a /filter request named for the pod, so "fits without victims?" looks at
   * every node kube-scheduler filtered it on (a forged or sampled request may name only full
   * nodes). At most {@value #RECORDED} pods; a dropped record's pod is never preempted for (16
   * times as many dropped UIDs are remembered).
   */
  public void filtered(PodView pod, Collection<String> nodes) {
    synchronized (filtered) {
      Set<String> all = new HashSet<>(nodes);
      Optional.ofNullable(filtered.get(pod.uid())).ifPresent(all::addAll);
      filtered.put(pod.uid(), Set.copyOf(all));
      if (filtered.size() > RECORDED) {
        Iterator<String> eldest = filtered.keySet().iterator();
        forgotten.add(eldest.next());
        eldest.remove();
        if (forgotten.size() > 16 * RECORDED) {
          forgotten.remove(forgotten.iterator().next());
        }
      }
    }
  }

  /** How many pods' filtered nodes {@link #filtered} records. */
  static final int RECORDED = 4096;

  /**
   * Queues a preemption for a pod that failed the Filter on every candidate node, unless one for
   * the same UID is queued or running or {@code capacity} are; returns at once.
   *
   * @return whether it was queued
   */
  public boolean submit(PodView pod, Collection<String> nodes) {
    List<String> candidates = List.copyOf(nodes);
    if (queued.size() >= capacity || !queued.add(pod.uid())) {
      return false;
    }
    try {
      executor.execute(
          () -> {
            try {
              preempt(pod, candidates);
            } catch (ClusterException | InvalidPodRequestException | RuntimeException e) {
              LOG.info("preemption for pod {} failed: {}", pod.key(), e.toString());
            } finally {
              queued.remove(pod.uid());
            }
          });
      return true;
    } catch (RejectedExecutionException e) {
      queued.remove(pod.uid());
      return false;
    }
  }

  /**
   * Plans, reserves and evicts for one pod on the calling thread, with the priority and policy of a
   * fresh read (a forged Filter request cannot make a low-priority pod evict).
   *
   * @param nodes the Filter's failed nodes
   * @return the {@code namespace/name} of the pods evicted; empty when the class comment's
   *     conditions stop it
   * @throws ClusterException if a read or write failed (evictions done so far stay done)
   * @throws InvalidPodRequestException if the pod's device requests cannot be parsed
   */
  public List<String> preempt(PodView pod, Collection<String> nodes)
      throws ClusterException, InvalidPodRequestException {
    return preempt(pod, nodes, MAX_PLANS);
  }

  private List<String> preempt(PodView pod, Collection<String> nodes, int rereads)
      throws ClusterException, InvalidPodRequestException {
    Optional<ClusterPod> current = reader.readPod(pod.namespace(), pod.name());
    Instant now = clock.instant();
    if (current.isEmpty() || !pending(current.get(), pod.uid(), now)) {
      return List.of();
    }
    if (!current.get().view().unschedulable()) {
      LOG.debug(
          "pod {}: kube-scheduler has not marked it PodScheduled=False/Unschedulable: nothing"
              + " evicted",
          pod.key());
      return List.of();
    }
    List<ClusterPod> members = members(current.get(), now);
    if (members.isEmpty()) {
      return List.of();
    }
    List<RunningPod> pods = new ArrayList<>(running.call());
    int priority = members.stream().mapToInt(m -> m.view().priority()).min().getAsInt();
    Set<String> asked = askedNodes(pod, nodes);
    if (asked.isEmpty()) {
      return List.of();
    }
    Set<String> planOn = new HashSet<>(nodes); // and each other member's recorded nodes
    synchronized (filtered) {
      members.stream()
          .skip(1)
          .map(m -> filtered.get(m.view().uid()))
          .filter(Objects::nonNull)
          .forEach(planOn::addAll);
    }
    List<NodeView> known =
        clusterNodes.call().stream()
            .filter(n -> asked.contains(n.name()) || planOn.contains(n.name()))
            .toList();
    // every node fitted on, not the request's alone: a port may answer only the asked nodes' slices
    DraObjects dra = reader.readDra(known.stream().map(NodeView::name).toList());
    List<NodeView> views =
        fitsWithoutVictims(pod, priority, known, asked, pods, dra)
            ? List.of()
            : known.stream().filter(n -> planOn.contains(n.name())).toList();
    List<String> evicted = new ArrayList<>();
    Map<String, String> versions = new LinkedHashMap<>(); // member key -> version
    members.forEach(m -> versions.put(m.key(), m.resourceVersion()));
    Map<PodView, String> reserved = new LinkedHashMap<>(); // member -> node
    Instant until = now.plus(hold).truncatedTo(ChronoUnit.SECONDS);
    List<PodView> gang = members.stream().map(ClusterPod::view).toList();
    for (int i = 0; i < MAX_PLANS && !views.isEmpty(); i++) {
      Optional<List<MemberPlan>> plan =
          planner.planGang(gang, priority, views, pods, List.of(), dra);
      if (plan.isEmpty()) {
        LOG.info("pod {}: no plan places {}: nothing evicted", pod.key(), versions.keySet());
        break;
      }
      if (!writes.reserve(pod, plan.get(), until, versions, reserved, now)) {
        // kube-scheduler writes the pod's PodScheduled condition after each failed cycle, so read
        // again: a reservation another replica now holds stops there
        return evicted.isEmpty() && rereads > 0 ? preempt(pod, nodes, rereads - 1) : evicted;
      }
      writes.dropLower(pods, plan.get(), priority, now);
      Optional<RunningPod> refused = writes.evict(plan.get(), evicted);
      if (refused.isEmpty()) {
        return evicted;
      }
      if (members.size() > 1) { // a gang: nothing further evicted, its reservations released
        break;
      }
      pods.removeIf(p -> evicted.contains(p.key()));
      pods.replaceAll(
          p ->
              p.key().equals(refused.get().key())
                  ? new RunningPod(p.pod(), Integer.MAX_VALUE, p.startTime(), p.gang())
                  : p);
    }
    writes.release(reserved, versions, now); // the Filter stops counting them now
    return evicted;
  }

  /** Unbound, this UID, not terminating, may preempt, holds no live reservation. */
  private static boolean pending(ClusterPod p, String uid, Instant now) {
    return !p.isBound()
        && p.view().uid().equals(uid)
        && !p.view().deleting()
        && !"Never".equals(p.view().preemptionPolicy())
        && UsageReconstructor.reservedUntil(p.view()).filter(now::isBefore).isEmpty();
  }

  /**
   * The preemptor and its gang's other pending members, read fresh; none if one is not {@link
   * #pending}.
   */
  private List<ClusterPod> members(ClusterPod preemptor, Instant now) throws ClusterException {
    Optional<String> gang = RunningPod.of(preemptor.view(), Instant.EPOCH).gang();
    List<ClusterPod> out = new ArrayList<>(List.of(preemptor));
    if (gang.isEmpty()) {
      return out;
    }
    List<PodView> others =
        unbound.call().stream()
            .filter(
                p ->
                    p.namespace().equals(preemptor.view().namespace())
                        && !p.key().equals(preemptor.key())
                        && !p.phase().isFinished()
                        && RunningPod.of(p, Instant.EPOCH).gang().equals(gang))
            .sorted(Comparator.comparing(PodView::key))
            .toList();
    for (PodView p : others) {
      Optional<ClusterPod> fresh = reader.readPod(p.namespace(), p.name());
      if (fresh.isEmpty() || fresh.get().isBound() || !fresh.get().view().uid().equals(p.uid())) {
        continue; // bound or gone meanwhile: not pending
      }
      if (!pending(fresh.get(), p.uid(), now)) {
        LOG.info("pod {}: gang member {} may not be preempted for now", preemptor.key(), p.key());
        return List.of();
      }
      out.add(fresh.get());
    }
    return out;
  }

  /** The nodes of this and every recorded request ({@link #filtered}); none if dropped. */
  private Set<String> askedNodes(PodView pod, Collection<String> nodes) {
    Set<String> asked = new HashSet<>(nodes);
    synchronized (filtered) {
      if (forgotten.contains(pod.uid())) {
        LOG.info(
            "pod {}: the nodes kube-scheduler filtered it on are no longer all recorded (more than"
                + " {} pods filtered since): nothing evicted",
            pod.key(),
            RECORDED);
        return Set.of();
      }
      Optional.ofNullable(filtered.get(pod.uid())).ifPresent(asked::addAll);
    }
    return asked;
  }

  /**
   * Whether the pod fits without victims one of the {@code asked} nodes, not any node of the
   * cluster (an affinity or taint may exclude those): kube-scheduler runs PostFilter only when no
   * node is feasible ({@code schedule_one.go} schedulePod), while a request may name only a sample
   * ({@code numFeasibleNodesToFind}).
   */
  private boolean fitsWithoutVictims(
      PodView pod,
      int priority,
      List<NodeView> known,
      Set<String> asked,
      List<RunningPod> pods,
      DraObjects dra)
      throws InvalidPodRequestException {
    List<NodeView> all = known.stream().filter(n -> asked.contains(n.name())).toList();
    Optional<NodePlan> fits =
        planner.plan(pod, priority, all, pods, List.of(), dra).byNode().values().stream()
            .filter(p -> p.outcome() == NodePlan.Outcome.FITS)
            .findFirst();
    fits.ifPresent(
        f -> LOG.info("pod {} fits node {} without victims: nothing evicted", pod.key(), f.node()));
    return fits.isPresent();
  }
}
