package dev.hamilock.doctor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.InvalidPodRequestException;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.device.spi.preempt.DisruptionBudget;
import dev.hamilock.device.spi.preempt.MemberPlan;
import dev.hamilock.device.spi.preempt.NodePlan;
import dev.hamilock.device.spi.preempt.PreemptionPlan;
import dev.hamilock.device.spi.preempt.PreemptionPlanner;
import dev.hamilock.device.spi.preempt.RunningPod;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.checks.Dra;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Instant;
import java.time.InstantSource;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * {@code hami-lock-doctor preempt NS/POD}: read-only dry run of GPU-slice-aware preemption (issue
 * 26) by the SPI's {@link PreemptionPlanner} (kube-scheduler v1.37.2 DefaultPreemption over HAMi's
 * fit) on the nodes with a HAMi registration. Priority is {@code spec.priority} (0 when unset),
 * start time {@code status.startTime} (now when unset), the gang what {@link RunningPod#of} reads.
 * A {@code policy/v1} PodDisruptionBudget protects the pods of its namespace its non-empty selector
 * matches, minus {@code status.disruptedPods} ({@code FilterVictimsWithPDBViolation}, {@code
 * pkg/scheduler/framework/preemption/util.go}); unreadable budgets are a "PDBs not read" note. A
 * gang member is planned with its gang's other pending members by {@link
 * PreemptionPlanner#planGang} at their lowest priority: all placed, or nobody evicted.
 */
final class Preempt {

  /** Finding id: the pod cannot be planned for (no such pod, or its GPU requests are invalid). */
  static final String PE01 = "PE01";

  /** Turns a PDB's selector into the maps preflight's {@link Dra#selects} reads. */
  private static final ObjectMapper MAPPER = new ObjectMapper();

  static final Cluster.Resource PDBS =
      new Cluster.Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget");

  private final Cluster cluster;
  private final VendorRegistry registry;
  private final InstantSource clock;

  Preempt(ApiClient client, VendorRegistry registry, InstantSource clock) {
    this.cluster =
        new Cluster(Objects.requireNonNull(client, "client"), java.time.Clock.systemUTC());
    this.registry = Objects.requireNonNull(registry, "registry");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  DoctorReport run(String namespace, String name) {
    List<ClusterReadException> unreadable = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    List<Finding> findings = new ArrayList<>();
    Optional<JsonNode> target = Optional.empty();
    List<JsonNode> nodeObjects = List.of();
    List<JsonNode> podObjects = List.of();
    try {
      target = cluster.get(Cluster.PODS, Optional.of(namespace), name);
      nodeObjects = cluster.list(Cluster.NODES, Optional.empty()).orElse(List.of());
      podObjects = cluster.list(Cluster.PODS, Optional.empty()).orElse(List.of());
    } catch (ClusterReadException e) {
      unreadable.add(e);
    }
    String key = namespace + "/" + name;
    if (!unreadable.isEmpty() || target.isEmpty()) {
      if (unreadable.isEmpty()) {
        findings.add(problem("pod-not-found", key, "no such pod"));
      }
      return report(findings, notes, unreadable, Optional.empty());
    }
    PodView preemptor;
    try {
      preemptor = JsonViews.podView(target.get());
    } catch (MalformedObjectException e) {
      findings.add(problem("pod-unreadable", key, e.getMessage()));
      return report(findings, notes, unreadable, Optional.empty());
    }
    UsageReconstructor usage = new UsageReconstructor(registry);
    List<NodeView> nodes = new ArrayList<>();
    for (JsonNode n : nodeObjects) {
      try {
        NodeView v = JsonViews.nodeView(n);
        if (usage.registeredDevices(v).status() != NodeUsage.Status.UNREGISTERED) {
          nodes.add(v);
        }
      } catch (MalformedObjectException e) {
        notes.add("node " + Json.name(n) + " not planned on: " + e.getMessage());
      }
    }
    Instant now = clock.instant();
    List<RunningPod> running = new ArrayList<>();
    for (JsonNode p : podObjects) {
      try {
        PodView v = JsonViews.podView(p);
        running.add(RunningPod.of(v, startTime(p, now)));
      } catch (MalformedObjectException | DateTimeParseException e) {
        notes.add("pod " + Json.key(p) + " not weighed: " + e.getMessage());
      }
    }
    boolean pdbsRead = true;
    List<DisruptionBudget> budgets = new ArrayList<>();
    try {
      Optional<List<JsonNode>> pdbs = cluster.list(PDBS, Optional.empty());
      if (pdbs.isEmpty()) {
        pdbsRead = false;
        notes.add("PDBs not read: this API server does not serve policy/v1 PodDisruptionBudgets");
      }
      for (JsonNode b : pdbs.orElse(List.of())) {
        budgets.add(budget(b, podObjects));
      }
    } catch (ClusterReadException e) {
      pdbsRead = false;
      notes.add("PDBs not read (planned as if no budget protected any pod): " + e.getMessage());
    }
    String policy = preemptor.preemptionPolicy();
    if (policy.equals("Never")) {
      notes.add(key + " has preemptionPolicy Never: kube-scheduler would not preempt for it");
    }
    Optional<String> gangName = RunningPod.of(preemptor, now).gang();
    List<PodView> members = members(preemptor, gangName, running);
    int priority = members.stream().mapToInt(PodView::priority).min().getAsInt();
    Map<String, String> nodeOf = new HashMap<>();
    running.forEach(
        r ->
            nodeOf.put(
                r.key(),
                r.pod()
                    .nodeName()
                    .orElse(r.pod().annotations().getOrDefault(HamiAnnotations.VGPU_NODE, ""))));
    PreemptionPlanner planner =
        new PreemptionPlanner(PodFitter.create(registry), cluster.serverClock());
    Optional<NodePlan> best = Optional.empty();
    List<PreemptEntry.NodeOutcome> outcomes = new ArrayList<>();
    Optional<PreemptEntry.GangOutcome> gang = Optional.empty();
    try {
      if (gangName.isPresent()) {
        gang =
            Optional.of(
                gang(
                    gangName.get(),
                    members,
                    planner.planGang(members, priority, nodes, running, budgets, DraObjects.NONE),
                    nodeOf));
      } else {
        PreemptionPlan plan =
            planner.plan(preemptor, priority, nodes, running, budgets, DraObjects.NONE);
        best = plan.best();
        for (NodePlan np : plan.byNode().values()) {
          outcomes.add(
              new PreemptEntry.NodeOutcome(
                  np.node(),
                  np.outcome().name(),
                  np.victims().stream().map(v -> victim(v, nodeOf)).toList(),
                  np.pdbViolations(),
                  np.reason()));
        }
      }
    } catch (InvalidPodRequestException e) {
      findings.add(problem("pod-request-invalid", key, e.getMessage()));
      return report(findings, notes, unreadable, Optional.empty());
    }
    notes.add(
        "planned on "
            + nodes.size()
            + " HAMi node(s) of "
            + nodeObjects.size()
            + ", weighing "
            + running.size()
            + " pod(s)"
            + (pdbsRead ? " and " + budgets.size() + " PodDisruptionBudget(s)" : ""));
    return report(
        findings,
        notes,
        unreadable,
        Optional.of(
            new PreemptEntry(
                key, priority, policy, best.map(NodePlan::node), outcomes, pdbsRead, gang)));
  }

  /** The pod, then its gang's other pending members (unbound, not finished) by key. */
  private static List<PodView> members(
      PodView pod, Optional<String> gang, List<RunningPod> running) {
    List<PodView> members = new ArrayList<>(List.of(pod));
    running.stream()
        .filter(r -> gang.isPresent() && r.gang().equals(gang))
        .map(RunningPod::pod)
        .filter(p -> p.namespace().equals(pod.namespace()) && !p.key().equals(pod.key()))
        .filter(p -> p.nodeName().isEmpty() && !p.phase().isFinished())
        .sorted(Comparator.comparing(PodView::key))
        .forEach(members::add);
    return members;
  }

  /**
   * A gang member's plan: every member's node and the union of their victims, or no node for any
   * when no plan places every member.
   */
  private static PreemptEntry.GangOutcome gang(
      String name,
      List<PodView> members,
      Optional<List<MemberPlan>> plan,
      Map<String, String> nodeOf) {
    if (plan.isEmpty()) {
      return new PreemptEntry.GangOutcome(
          name,
          members.stream().map(m -> new PreemptEntry.Member(m.key(), "")).toList(),
          false,
          List.of(),
          0);
    }
    List<PreemptEntry.Victim> victims = new ArrayList<>();
    plan.get().forEach(m -> m.plan().victims().forEach(v -> victims.add(victim(v, nodeOf))));
    return new PreemptEntry.GangOutcome(
        name,
        plan.get().stream()
            .map(m -> new PreemptEntry.Member(m.pod().key(), m.plan().node()))
            .toList(),
        true,
        victims,
        plan.get().stream().mapToInt(m -> m.plan().pdbViolations()).sum());
  }

  private static PreemptEntry.Victim victim(RunningPod v, Map<String, String> nodeOf) {
    return new PreemptEntry.Victim(
        v.key(), v.priority(), nodeOf.getOrDefault(v.key(), ""), v.gang());
  }

  /** kube-scheduler {@code util.GetPodStartTime}: {@code status.startTime}, now when unset. */
  private static Instant startTime(JsonNode pod, Instant now) {
    return Json.string(Json.object(pod, "status"), "startTime").map(Instant::parse).orElse(now);
  }

  /** A PodDisruptionBudget with the pods of its namespace it protects. */
  static DisruptionBudget budget(JsonNode pdb, List<JsonNode> pods) {
    String ns = Json.namespace(pdb);
    JsonNode selector = Json.object(pdb, "spec", "selector");
    Set<String> disrupted = new HashSet<>();
    Json.object(pdb, "status", "disruptedPods").fieldNames().forEachRemaining(disrupted::add);
    Set<String> protectedPods = new LinkedHashSet<>();
    boolean empty =
        selector.path("matchLabels").isEmpty() && selector.path("matchExpressions").isEmpty();
    for (JsonNode p : pods) {
      if (!empty
          && Json.namespace(p).equals(ns)
          && !disrupted.contains(Json.name(p))
          && Dra.selects(MAPPER.convertValue(selector, Map.class), Json.labels(p))) {
        protectedPods.add(Json.key(p));
      }
    }
    return new DisruptionBudget(
        Json.key(pdb),
        protectedPods,
        Math.max(0, Json.object(pdb, "status").path("disruptionsAllowed").asInt(0)));
  }

  private static Finding problem(String name, String pod, String why) {
    return Audit.finding(
        PE01,
        name,
        Severity.ERROR,
        "Pod " + pod,
        "",
        "cannot plan preemption for " + pod + ": " + why,
        "");
  }

  private static DoctorReport report(
      List<Finding> findings,
      List<String> notes,
      List<ClusterReadException> unreadable,
      Optional<PreemptEntry> entry) {
    return new DoctorReport(
        "preempt",
        List.of(),
        Optional.empty(),
        entry.map(Preempt::summary),
        findings,
        notes,
        unreadable,
        entry);
  }

  /** The one-paragraph answer: the best node and its victims, or why there is none. */
  static String summary(PreemptEntry e) {
    StringBuilder sb =
        new StringBuilder("preempt ")
            .append(e.preemptor())
            .append(" (priority ")
            .append(e.priority());
    if (e.gang().isPresent()) {
      return gangSummary(sb, e.gang().get());
    }
    sb.append("): ");
    Optional<PreemptEntry.NodeOutcome> best =
        e.bestNode().flatMap(b -> e.nodes().stream().filter(n -> n.node().equals(b)).findFirst());
    if (best.isPresent()) {
      sb.append("best node ")
          .append(best.get().node())
          .append(", evict ")
          .append(best.get().victims().size())
          .append(" pod(s), ")
          .append(best.get().pdbViolations())
          .append(" PDB violation(s)");
    } else if (e.nodes().stream().anyMatch(n -> n.outcome().equals("FITS"))) {
      sb.append("no preemption needed, it fits as the cluster is");
    } else {
      sb.append("no node where evicting lower-priority pods makes it fit");
    }
    sb.append(System.lineSeparator());
    for (PreemptEntry.NodeOutcome n : e.nodes()) {
      sb.append(String.format(Locale.ROOT, "  %-20s %-8s", n.node(), n.outcome()));
      if (n.outcome().equals("PREEMPT")) {
        sb.append(n.pdbViolations()).append(" PDB violation(s)");
      }
      sb.append(n.reason()).append(System.lineSeparator());
      n.victims().forEach(v -> evict(sb.append("  "), v, n.node()));
    }
    return sb.toString().stripTrailing();
  }

  /** The gang's line, its members' nodes and the union of their victims, each on its node. */
  private static String gangSummary(StringBuilder sb, PreemptEntry.GangOutcome g) {
    sb.append(", gang ")
        .append(g.name())
        .append(": ")
        .append(g.members().size())
        .append(" pending member(s)): ")
        .append(
            g.placed()
                ? "evict "
                    + g.victims().size()
                    + " pod(s), "
                    + g.pdbViolations()
                    + " PDB violation(s)"
                : "no plan places every member")
        .append(System.lineSeparator());
    for (PreemptEntry.Member m : g.members()) {
      sb.append("  member ")
          .append(m.pod())
          .append(m.node().isEmpty() ? "" : " on " + m.node())
          .append(System.lineSeparator());
    }
    g.victims().forEach(v -> evict(sb, v, ""));
    return sb.toString().stripTrailing();
  }

  /** {@code " evict POD (priority P[, gang G][, on node N])"}, the node unless it is {@code at}. */
  private static void evict(StringBuilder sb, PreemptEntry.Victim v, String at) {
    sb.append("  evict ")
        .append(v.pod())
        .append(" (priority ")
        .append(v.priority())
        .append(v.gang().map(g -> ", gang " + g).orElse(""))
        .append(v.node().equals(at) ? "" : ", on node " + v.node())
        .append(')')
        .append(System.lineSeparator());
  }
}
