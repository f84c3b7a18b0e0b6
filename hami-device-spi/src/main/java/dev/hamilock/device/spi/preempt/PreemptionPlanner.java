package dev.hamilock.device.spi.preempt;

import com.google.common.base.Preconditions;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.NodeFit;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.PodUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * GPU-slice-aware preemption planning without a Kubernetes client: which lower-priority pods to
 * evict per node so that a pending pod fits by the Filter's {@link PodFitter#fit fit} (memory in
 * MiB, cores in % of a card, slots), and which node kube-scheduler would pick; the caller evicts
 * and reserves. Follows kube-scheduler v1.37.2 DefaultPreemption (k8s.io/kubernetes {@code
 * pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go}, {@code
 * framework/preemption/util.go}, {@code types.go}, {@code preemption.go}):
 *
 * <ul>
 *   <li><b>Eligible</b> (isPreemptionAllowedAcrossAllVictimNodes): pods of strictly lower priority.
 *       A gang (one namespace and {@link RunningPod#gang()}) is one eviction unit ({@code types.go}
 *       getCrossNodesVictims): eligible only if every member is lower, evicted whole (on other
 *       nodes too) or not at all; its priority is its highest member's.
 *   <li><b>Victims on a node</b> (SelectVictimsOnNode): remove every eligible unit; still no fit
 *       makes the node {@link NodePlan.Outcome#NONE}. Else sort the units most important first
 *       (MoreImportantVictim: priority, gang before lone pod, more members, earlier start, key),
 *       split them by PDB violation (FilterVictimsWithPDBViolation) and reprieve the violating ones
 *       first: a unit is put back whenever the preemptor still fits with it. HAMi's greedy
 *       placement is not monotone in usage, so the reprieve repeats until none comes back; a node
 *       whose pods all come back is {@link NodePlan.Outcome#FITS}.
 *   <li><b>Node order</b> (pickOneNodeForPreemption): fewest PDB violations, lowest highest-victim
 *       priority, smallest sum of (priority + 2<sup>31</sup>), fewest victims, latest earliest
 *       start of the highest-priority victims; last the node name (kube-scheduler: any).
 * </ul>
 *
 * <p>An unbound pod holding a {@value UsageReconstructor#RESERVATION} (a nominated preemptor) is
 * never a victim; one of the preemptor's priority or higher counts, a lower one does not (the
 * caller drops it, as {@code preemption.go} prepareCandidate clears lower nominations). Not
 * modelled: CPU, memory, pods (kube-scheduler's own dry run). Usage by {@link UsageReconstructor},
 * fail closed (an undecodable allocation makes the node {@link NodePlan.Outcome#NONE}).
 * Thread-safe.
 */
public final class PreemptionPlanner {
  private final PodFitter fitter;
  private final UsageReconstructor usage;

  /** {@code fitter}: the Filter's; {@code clock}: what a reservation's expiry is compared with. */
  public PreemptionPlanner(PodFitter fitter, InstantSource clock) {
    this.fitter = Objects.requireNonNull(fitter, "fitter");
    this.usage = new UsageReconstructor(fitter.registry(), clock);
  }

  /**
   * Plans preemption for one pod on every given node.
   *
   * @param preemptor the pending pod (its own entry in {@code pods}, if any, is ignored)
   * @param pods the pods placed on any node, with their HAMi allocation annotations; a pod on none
   *     of {@code nodes} counts only as a gang member; Succeeded/Failed pods are ignored
   * @param budgets the PodDisruptionBudgets, in the order their allowed counts are consumed
   * @param dra the DRA objects of {@code nodes} ({@link DraObjects#NONE} for none): the cards they
   *     hold count as usage no eviction frees ({@link UsageReconstructor#plusDra})
   * @return per node a plan; the {@link NodePlan.Outcome#PREEMPT} nodes ordered
   * @throws InvalidPodRequestException when the preemptor's device requests cannot be parsed
   * @throws IllegalArgumentException naming a pod given twice
   */
  public PreemptionPlan plan(
      PodView preemptor,
      int priority,
      Collection<NodeView> nodes,
      Collection<RunningPod> pods,
      Collection<DisruptionBudget> budgets,
      DraObjects dra)
      throws InvalidPodRequestException {
    PodRequests requests = fitter.requests(preemptor);
    Map<String, List<Placed>> byNode = new HashMap<>();
    Map<String, Unit> units = new HashMap<>();
    Set<String> seen = new HashSet<>();
    for (RunningPod p : pods) {
      Preconditions.checkArgument(seen.add(p.key()), "pod %s given twice", p.key());
      if (p.key().equals(preemptor.key())
          || p.pod().phase().isFinished()
          || (Unit.reserved(p) && p.priority() < priority)) {
        continue;
      }
      Optional<PodUsage> u = usage.podUsage(p.pod());
      Optional<String> node = u.map(PodUsage::nodeName).or(() -> p.pod().nodeName());
      node.ifPresent(n -> byNode.computeIfAbsent(n, k -> new ArrayList<>()).add(new Placed(p, u)));
      units.computeIfAbsent(p.unitKey(), k -> new Unit()).members.add(p);
    }
    units.values().forEach(u -> u.members.sort(POD_IMPORTANCE));
    Map<String, NodePlan> plans = new LinkedHashMap<>();
    Map<Object, Object> memo = FitContext.newMemo();
    for (NodeView n : nodes) {
      List<Placed> on = byNode.getOrDefault(n.name(), List.of());
      List<Unit> eligible =
          on.stream()
              .map(p -> units.get(p.pod().unitKey()))
              .distinct()
              .filter(u -> u.priority() < priority && u.members.stream().noneMatch(Unit::reserved))
              .sorted(IMPORTANCE)
              .toList();
      plans.put(
          n.name(),
          planNode(
              new Node(requests, memo, usage.plusDra(usage.registeredDevices(n), dra), on),
              eligible,
              budgets));
    }
    List<NodePlan> candidates =
        plans.values().stream()
            .filter(p -> p.outcome() == NodePlan.Outcome.PREEMPT)
            .sorted(NODE_ORDER)
            .toList();
    return new PreemptionPlan(candidates, plans);
  }

  /**
   * Plans the pending members of one gang together (all placed, or nobody evicted), in order, each
   * by {@link #plan} with the earlier members' victims gone and the earlier members counted with
   * their fits' cards: a member goes to the first node where it fits without victims, else to its
   * best plan, so freed slices are never given to two members.
   *
   * @param members the pending members, at least one; their own entries in {@code pods} are ignored
   * @param priority the gang's priority, e.g. its lowest member's: every victim's is lower
   * @return one {@link MemberPlan} per member, in order; empty when some member cannot be placed
   * @throws InvalidPodRequestException when a member's device requests cannot be parsed
   * @throws IllegalArgumentException naming a pod given twice, or when {@code members} is empty
   */
  public Optional<List<MemberPlan>> planGang(
      List<PodView> members,
      int priority,
      Collection<NodeView> nodes,
      Collection<RunningPod> pods,
      Collection<DisruptionBudget> budgets,
      DraObjects dra)
      throws InvalidPodRequestException {
    Preconditions.checkArgument(!members.isEmpty(), "a gang plan needs a member");
    Set<String> keys = new HashSet<>();
    members.forEach(
        m -> Preconditions.checkArgument(keys.add(m.key()), "pod %s given twice", m.key()));
    List<RunningPod> left = new ArrayList<>(pods);
    left.removeIf( // as plan() skips them: a lower nomination is not counted
        p -> keys.contains(p.key()) || (Unit.reserved(p) && p.priority() < priority));
    List<MemberPlan> out = new ArrayList<>();
    for (PodView m : members) {
      PreemptionPlan p = plan(m, priority, nodes, left, budgets, dra);
      Optional<NodePlan> at =
          p.byNode().values().stream()
              .filter(n -> n.outcome() == NodePlan.Outcome.FITS)
              .findFirst()
              .or(p::best);
      if (at.isEmpty()) {
        return Optional.empty();
      }
      Set<String> gone = new HashSet<>();
      at.get().victims().forEach(v -> gone.add(v.key()));
      left.removeIf(r -> gone.contains(r.key()));
      NodeView node =
          nodes.stream().filter(n -> n.name().equals(at.get().node())).findFirst().get();
      NodeFit fit =
          fitter.fit(m, usage.nodeUsage(node, left.stream().map(RunningPod::pod).toList(), dra));
      Preconditions.checkState(
          fit.fits(), "pod %s does not fit its plan: %s", m.key(), fit.reason());
      out.add(new MemberPlan(m, at.get(), fit));
      Map<String, String> counted = new HashMap<>(m.annotations());
      counted.remove(UsageReconstructor.RESERVATION); // an expired one would count nothing
      counted.putAll(fitter.registry().allocationAnnotations(fit.devices()));
      counted.put(HamiAnnotations.VGPU_NODE, node.name());
      PodView placed = m.toBuilder().nodeName(null).annotations(counted).build();
      left.add(new RunningPod(placed, Integer.MAX_VALUE, Instant.EPOCH, Optional.empty()));
    }
    return Optional.of(out);
  }

  private NodePlan planNode(Node node, List<Unit> eligible, Collection<DisruptionBudget> budgets) {
    String name = node.base().name();
    Set<String> gone = new HashSet<>();
    eligible.forEach(u -> u.members.forEach(m -> gone.add(m.key())));
    NodeFit all = fit(node, gone);
    if (!all.fits()) {
      String why =
          eligible.isEmpty()
              ? "No preemption victims found for incoming pod: " + all.reason()
              : all.reason();
      return new NodePlan(name, NodePlan.Outcome.NONE, List.of(), 0, why);
    }
    int[] allowed = budgets.stream().mapToInt(DisruptionBudget::disruptionsAllowed).toArray();
    List<DisruptionBudget> pdbs = List.copyOf(budgets);
    Map<Unit, Integer> violating = new HashMap<>();
    for (Unit u : eligible) {
      for (RunningPod m : u.members) {
        if (violates(m.key(), pdbs, allowed)) {
          violating.merge(u, 1, Integer::sum);
        }
      }
    }
    List<Unit> victims = new ArrayList<>(eligible); // violating first, each part in its order
    victims.sort(Comparator.comparing(u -> !violating.containsKey(u)));
    boolean reprieved = true;
    while (reprieved) { // a second pass changes nothing unless the fit is not monotone
      reprieved = false;
      for (Iterator<Unit> it = victims.iterator(); it.hasNext(); ) {
        Unit u = it.next();
        u.members.forEach(m -> gone.remove(m.key()));
        if (fit(node, gone).fits()) {
          it.remove();
          reprieved = true;
        } else {
          u.members.forEach(m -> gone.add(m.key()));
        }
      }
    }
    int violations = victims.stream().mapToInt(u -> violating.getOrDefault(u, 0)).sum();
    if (victims.isEmpty()) {
      return new NodePlan(name, NodePlan.Outcome.FITS, List.of(), 0, "");
    }
    victims.sort(IMPORTANCE);
    List<RunningPod> pods = new ArrayList<>();
    victims.forEach(u -> pods.addAll(u.members));
    return new NodePlan(name, NodePlan.Outcome.PREEMPT, pods, violations, "");
  }

  /** kube-scheduler's podIsViolating: consumes each budget protecting the pod, in order. */
  private static boolean violates(String pod, List<DisruptionBudget> pdbs, int[] allowed) {
    for (int i = 0; i < allowed.length; i++) {
      if (pdbs.get(i).protectedPods().contains(pod) && --allowed[i] < 0) {
        return true;
      }
    }
    return false;
  }

  private NodeFit fit(Node node, Set<String> gone) {
    List<PodUsage> kept = new ArrayList<>();
    for (Placed p : node.pods()) {
      if (!gone.contains(p.pod().key())) {
        p.usage().ifPresent(kept::add);
      }
    }
    return fitter.fit(node.requests(), UsageReconstructor.apply(node.base(), kept), node.memo());
  }

  private record Node(
      PodRequests requests, Map<Object, Object> memo, NodeUsage base, List<Placed> pods) {}

  private record Placed(RunningPod pod, Optional<PodUsage> usage) {}

  /** An eviction unit (identity equality): one pod, or a gang's members most important first. */
  private static final class Unit {
    final List<RunningPod> members = new ArrayList<>();

    int priority() {
      return members.get(0).priority();
    }

    boolean gang() {
      return members.get(0).gang().isPresent();
    }

    /** An unbound preemptor holding a reservation: nominated, not placed, never a victim. */
    static boolean reserved(RunningPod p) {
      return p.pod().nodeName().isEmpty() && UsageReconstructor.reservedUntil(p.pod()).isPresent();
    }

    Instant start() {
      return members.stream()
          .map(RunningPod::startTime)
          .min(Comparator.naturalOrder())
          .orElseThrow();
    }
  }

  /** kube-scheduler MoreImportantPod: higher priority, then earlier start (then key). */
  private static final Comparator<RunningPod> POD_IMPORTANCE =
      Comparator.comparingInt(RunningPod::priority)
          .reversed()
          .thenComparing(RunningPod::startTime)
          .thenComparing(RunningPod::key);

  /** kube-scheduler MoreImportantVictim, most important first (then key). */
  private static final Comparator<Unit> IMPORTANCE =
      Comparator.comparingInt(Unit::priority)
          .reversed()
          .thenComparing(u -> !u.gang())
          .thenComparing(Comparator.comparingInt((Unit u) -> u.members.size()).reversed())
          .thenComparing(Unit::start)
          .thenComparing(u -> u.members.get(0).key());

  /** kube-scheduler pickOneNodeForPreemption's score functions as one order, best first. */
  private static final Comparator<NodePlan> NODE_ORDER =
      Comparator.comparingInt(NodePlan::pdbViolations)
          .thenComparingInt(p -> p.victims().get(0).priority())
          .thenComparingLong(
              p -> p.victims().stream().mapToLong(v -> v.priority() + (1L << 31)).sum())
          .thenComparingInt(p -> p.victims().size())
          .thenComparing(PreemptionPlanner::earliestOfHighest, Comparator.reverseOrder())
          .thenComparing(NodePlan::node);

  private static Instant earliestOfHighest(NodePlan p) {
    int top = p.victims().get(0).priority();
    return p.victims().stream()
        .filter(v -> v.priority() == top)
        .map(RunningPod::startTime)
        .min(Comparator.naturalOrder())
        .orElseThrow();
  }
}
