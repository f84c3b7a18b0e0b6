package dev.hamilock.bind.testing;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.ContainerAllocation;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.ContainerRole;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The gang-bind safety property, checked after quiescence from the {@link PhysicalLedger} and the
 * final cluster state. Returns every violation instead of stopping at the first, so that
 * falsification tests can assert which kind occurs. A card's capacity is checked against the sum,
 * over the pods on it, of each pod's peak over its phases (init containers, native sidecars, app
 * containers: Kubernetes' {@code PodRequests} per card), not the sum of all its containers.
 */
public final class BindInvariants {
  /** NVIDIA annotation keys the checker reads. */
  static final String TO_ALLOCATE = "hami.io/vgpu-devices-to-allocate";

  static final String ALLOCATED = "hami.io/vgpu-devices-allocated";
  static final String LOCK = HamiAnnotations.MUTEX_LOCK;

  /** The kinds that mean a card over-committed or an allocation handed to the wrong pod. */
  public static final Set<Kind> CAPACITY_OR_SWAP =
      Collections.unmodifiableSet(
          EnumSet.of(
              Kind.MEMORY_OVERCOMMIT,
              Kind.CORES_OVERCOMMIT,
              Kind.SLOTS_OVERCOMMIT,
              Kind.EXCLUSIVE_SHARED,
              Kind.ANNOTATED_OVERCOMMIT,
              Kind.SWAPPED_ALLOCATION));

  private BindInvariants() {}

  /** Kinds of violations. */
  public enum Kind {
    /** Σ device memory handed out on a GPU exceeds its memory. */
    MEMORY_OVERCOMMIT,
    /** Σ cores handed out on a GPU exceeds 100. */
    CORES_OVERCOMMIT,
    /** More containers on a GPU than its split count. */
    SLOTS_OVERCOMMIT,
    /** An exclusive container (cores 100) shares its GPU. */
    EXCLUSIVE_SHARED,
    /**
     * Allocated annotations of bound pods over-commit a GPU (memory, cores, slots, exclusivity).
     */
    ANNOTATED_OVERCOMMIT,
    /** A pod received another pod's allocation, or not what was written for it (HAMi#781). */
    SWAPPED_ALLOCATION,
    /** A bound pod's Allocate found nothing to hand out, or failed although it should not have. */
    NOT_SERVED,
    /** A node lock is still held after quiescence. */
    LOCK_LEFT_HELD,
    /** A pod's binding disagrees with what its bind call reported. */
    BIND_RESULT_MISMATCH,
    /**
     * A bound pod's annotations do not match its allocation or were not completed by the plugin.
     */
    INCONSISTENT_BOUND_POD,
    /** An unbound pod still carries allocation annotations. */
    STALE_ALLOCATION_ON_UNBOUND_POD,
    /** The ledger names a device the scenario does not have. */
    UNKNOWN_DEVICE,
    /**
     * A pod whose lock a skewed writer took over before its confirmation was bound, or ended other
     * than {@code CONTENDED} (or {@code DOES_NOT_FIT} from its re-fit before the confirmation).
     */
    LOST_LOCK_NOT_CONTENDED,
    /**
     * The lock a skewed writer took over was changed or removed by someone else before its release.
     */
    NEW_HOLDER_TOUCHED,
    /** {@code hami-lock-doctor audit} reports a card over its memory, cores or slots (AU01). */
    AUDITED_OVERCOMMIT,
    /**
     * A card over its memory, cores or slots by the bound pods' allocation annotations that {@code
     * hami-lock-doctor audit} does not report.
     */
    OVERCOMMIT_NOT_AUDITED
  }

  /**
   * @param detail the evidence (pod, device, values)
   * @param card the card's UUID when it is over its memory, cores or slots or an exclusive holder
   *     shares it (physically or by annotations, as AU01), else empty
   */
  public record Violation(Kind kind, String detail, Optional<String> card) {
    /** Validates. */
    public Violation {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(detail, "detail");
      Objects.requireNonNull(card, "card");
    }

    /** A violation about no card's capacity. */
    public Violation(Kind kind, String detail) {
      this(kind, detail, Optional.empty());
    }
  }

  /**
   * @param binds the bind result of every pod that was bound or attempted, by pod name
   * @param pods final state of the scenario's pods
   * @param nodes final state of the nodes
   * @return every violation found (empty if the property holds)
   */
  public static List<Violation> check(
      Scenario scenario,
      Map<String, BindResult> binds,
      PhysicalLedger ledger,
      List<ClusterPod> pods,
      List<NodeView> nodes) {
    List<Violation> out = new ArrayList<>();
    Map<String, Scenario.GpuSpec> gpus = scenario.gpusByUuid();
    Map<String, Scenario.PodSpec> specs = new HashMap<>();
    scenario.pods().forEach(p -> specs.put(p.name(), p));
    // each pod's container roles from its spec (the scenario's truth), else as stored
    Map<String, List<ContainerRole>> roles = new HashMap<>();
    pods.forEach(
        p ->
            roles.put(
                p.view().key(),
                specs.containsKey(p.view().name())
                    ? specs.get(p.view().name()).containerRoles()
                    : p.view().containerRoles()));

    // 1. physical capacity and ownership, from the ledger
    Map<String, Usage> physical = new HashMap<>();
    gpus.values().stream() // a card a ResourceClaim holds is wholly used (issue 28)
        .filter(Scenario.GpuSpec::claimedByDra)
        .forEach(
            g ->
                physical
                    .computeIfAbsent(g.uuid(), k -> new Usage())
                    .add(
                        "ResourceClaim",
                        new ContainerDevice(0, g.uuid(), "NVIDIA", g.memoryMiB(), 100, 1),
                        true));
    for (PhysicalLedger.Entry e : ledger.entries()) {
      String podName = e.podKey().substring(e.podKey().indexOf('/') + 1);
      Scenario.PodSpec spec = specs.get(podName);
      if (e.status() == HandoffResult.Status.COMPLETED
          || e.status() == HandoffResult.Status.PARTIAL) {
        if (!e.servedPodKey().equals(e.podKey())) {
          out.add(
              new Violation(
                  Kind.SWAPPED_ALLOCATION,
                  "pod "
                      + e.podKey()
                      + " on "
                      + e.node()
                      + " received the allocation of "
                      + e.servedPodKey()
                      + ": "
                      + e.containers()));
        } else {
          BindResult b = binds.get(podName);
          for (ContainerAllocation c : e.containers()) {
            String written =
                b == null || b.devices().isEmpty()
                    ? "<none>"
                    : PodDevicesCodec.encodeContainer(
                        b.devices().get().forVendor("NVIDIA").get(c.containerIndex()));
            String given = PodDevicesCodec.encodeContainer(c.devices());
            if (!written.equals(given)) {
              out.add(
                  new Violation(
                      Kind.SWAPPED_ALLOCATION,
                      "pod "
                          + e.podKey()
                          + " container "
                          + c.containerIndex()
                          + " received "
                          + given
                          + " but "
                          + written
                          + " was written for it"));
            }
          }
        }
        List<List<ContainerDevice>> given = new ArrayList<>();
        for (ContainerAllocation c : e.containers()) {
          while (given.size() <= c.containerIndex()) {
            given.add(List.of());
          }
          given.set(c.containerIndex(), c.devices());
        }
        addPod(physical, e.podKey(), given, roles.getOrDefault(e.podKey(), List.of()));
      } else if (e.status() != HandoffResult.Status.FAILED || spec == null || !spec.pluginFails()) {
        out.add(
            new Violation(
                Kind.NOT_SERVED,
                "pod "
                    + e.podKey()
                    + " on "
                    + e.node()
                    + ": Allocate "
                    + e.status()
                    + " "
                    + e.reason()));
      }
    }
    checkCapacity(gpus, physical, out, false);

    // 2. no lock left behind
    for (NodeView n : nodes) {
      String v = n.annotations().get(LOCK);
      if (v != null) {
        out.add(
            new Violation(
                Kind.LOCK_LEFT_HELD, "node " + n.name() + " still has " + LOCK + "=" + v));
      }
    }

    // 3. every pod bound consistently or unbound and clean; annotated capacity
    Map<String, Usage> annotated = new HashMap<>();
    for (ClusterPod p : pods) {
      PodView v = p.view();
      BindResult b = binds.get(v.name());
      Map<String, String> a = v.annotations();
      if (p.isBound()) {
        String node = p.nodeName().get();
        if (b == null || !b.isBound() || !b.node().equals(node)) {
          out.add(
              new Violation(
                  Kind.BIND_RESULT_MISMATCH,
                  "pod "
                      + v.key()
                      + " is bound to "
                      + node
                      + " but its bind reported "
                      + (b == null ? "nothing" : b.outcome() + " on " + b.node())));
          continue;
        }
        String expected =
            b.devices().map(d -> PodDevicesCodec.encode(d.forVendor("NVIDIA"))).orElse("<none>");
        if (!node.equals(a.get(HamiAnnotations.VGPU_NODE))
            || !node.equals(v.labels().get(HamiAnnotations.VGPU_NODE))
            || !expected.equals(a.get(ALLOCATED))) {
          out.add(
              new Violation(
                  Kind.INCONSISTENT_BOUND_POD,
                  "pod "
                      + v.key()
                      + " bound to "
                      + node
                      + " has vgpu-node "
                      + a.get(HamiAnnotations.VGPU_NODE)
                      + ", label "
                      + v.labels().get(HamiAnnotations.VGPU_NODE)
                      + ", allocated "
                      + a.get(ALLOCATED)
                      + " but its bind wrote "
                      + expected));
        }
        String phase = a.get(HamiAnnotations.BIND_PHASE);
        if ("success".equals(phase)) {
          if (hasPending(a.get(TO_ALLOCATE))) {
            out.add(
                new Violation(
                    Kind.INCONSISTENT_BOUND_POD,
                    "pod "
                        + v.key()
                        + " has bind phase success but "
                        + TO_ALLOCATE
                        + "="
                        + a.get(TO_ALLOCATE)));
          }
        } else if (!"failed".equals(phase)) {
          out.add(
              new Violation(
                  Kind.INCONSISTENT_BOUND_POD,
                  "pod "
                      + v.key()
                      + " bound to "
                      + node
                      + " was never completed by the device plugin (bind phase "
                      + phase
                      + ")"));
        }
        try {
          addPod(
              annotated,
              v.key(),
              PodDevicesCodec.decode(a.getOrDefault(ALLOCATED, "")),
              roles.get(v.key()));
        } catch (DeviceAnnotationException e) {
          out.add(
              new Violation(
                  Kind.INCONSISTENT_BOUND_POD,
                  "pod " + v.key() + " has undecodable " + ALLOCATED + ": " + e.getMessage()));
        }
      } else {
        if (b != null && b.isBound()) {
          out.add(
              new Violation(
                  Kind.BIND_RESULT_MISMATCH,
                  "pod " + v.key() + " is unbound but its bind reported BOUND on " + b.node()));
        }
        for (String k :
            List.of(
                TO_ALLOCATE,
                ALLOCATED,
                HamiAnnotations.VGPU_NODE,
                HamiAnnotations.VGPU_TIME,
                HamiAnnotations.BIND_PHASE,
                HamiAnnotations.BIND_TIME)) {
          if (a.containsKey(k)) {
            out.add(
                new Violation(
                    Kind.STALE_ALLOCATION_ON_UNBOUND_POD,
                    "unbound pod "
                        + v.key()
                        + " still has "
                        + k
                        + "="
                        + a.get(k)
                        + (b == null ? "" : " (bind " + b.outcome() + ": " + b.reason() + ")")));
          }
        }
        if (v.labels().containsKey(HamiAnnotations.VGPU_NODE)) {
          out.add(
              new Violation(
                  Kind.STALE_ALLOCATION_ON_UNBOUND_POD,
                  "unbound pod " + v.key() + " still has label " + HamiAnnotations.VGPU_NODE));
        }
      }
    }
    checkCapacity(gpus, annotated, out, true);
    return out;
  }

  /**
   * Checks {@link Scenario.LockRemoval#SKEWED_TAKEOVER}s: the binder that lost its lock ends {@code
   * CONTENDED} without a Binding (or {@code DOES_NOT_FIT} from its re-fit before the confirmation),
   * and the skewed writer's lock stays its own until it releases it.
   *
   * @param binds the bind result of every pod by name
   * @return every violation found
   */
  public static List<Violation> checkTakeovers(
      List<RunReport.SkewedTakeoverEvent> takeovers, Map<String, BindResult> binds) {
    List<Violation> out = new ArrayList<>();
    for (RunReport.SkewedTakeoverEvent t : takeovers) {
      BindResult b = binds.get(t.pod());
      if (t.takeover().replaced().isPresent()
          && (b == null
              || (b.outcome() != BindOutcome.CONTENDED
                  && b.outcome() != BindOutcome.DOES_NOT_FIT))) {
        out.add(
            new Violation(
                Kind.LOST_LOCK_NOT_CONTENDED,
                "pod "
                    + t.pod()
                    + " lost its lock to "
                    + t.takeover()
                    + " but its bind reported "
                    + (b == null ? "nothing" : b.outcome() + " on " + b.node())));
      }
      if (!t.newHolderUntouched()) {
        out.add(
            new Violation(
                Kind.NEW_HOLDER_TOUCHED,
                "the skewed writer's lock "
                    + t.takeover()
                    + " was "
                    + t.seenAtRelease().orElse("<absent>")
                    + " at its release (binder "
                    + t.pod()
                    + ")"));
      }
    }
    return out;
  }

  /**
   * Audits the final state as {@code hami-lock-doctor audit} (finding AU01) with the SPI code it is
   * built on ({@link UsageReconstructor#clusterUsage}, {@link DeviceUsage#overCommit()}): a lock
   * removal between a binder's last confirmation and its Binding cannot be prevented, so the audit
   * must find what it causes. It reads the annotations, so it finds {@link
   * Kind#ANNOTATED_OVERCOMMIT}, not {@link Kind#SWAPPED_ALLOCATION}.
   *
   * @param found the violations of {@link #check} for the same state
   * @return an {@link Kind#AUDITED_OVERCOMMIT} per card the audit reports, an {@link
   *     Kind#OVERCOMMIT_NOT_AUDITED} per card of an {@link Kind#ANNOTATED_OVERCOMMIT} of {@code
   *     found} over its capacity that it does not report
   */
  public static List<Violation> checkAudit(
      VendorRegistry registry, List<Violation> found, List<NodeView> nodes, List<ClusterPod> pods) {
    Set<String> audited = new HashSet<>();
    List<Violation> out = new ArrayList<>();
    new UsageReconstructor(registry)
        .clusterUsage(nodes, pods.stream().map(ClusterPod::view).toList())
        .forEach(
            (node, usage) ->
                usage.devices().stream()
                    .filter(d -> !d.overCommit().isEmpty())
                    .forEach(
                        d -> {
                          audited.add(d.id());
                          out.add(
                              new Violation(
                                  Kind.AUDITED_OVERCOMMIT,
                                  "audit: node " + node + " card " + d.id() + " " + d.overCommit(),
                                  Optional.of(d.id())));
                        }));
    found.stream()
        .filter(v -> v.kind() == Kind.ANNOTATED_OVERCOMMIT)
        .flatMap(v -> v.card().stream())
        .distinct()
        .filter(c -> !audited.contains(c))
        .forEach(
            c ->
                out.add(
                    new Violation(
                        Kind.OVERCOMMIT_NOT_AUDITED,
                        "card " + c + " is over-committed but the audit does not report it",
                        Optional.of(c))));
    return out;
  }

  private static boolean hasPending(String toAllocate) {
    if (toAllocate == null) {
      return false;
    }
    try {
      return PodDevicesCodec.decode(toAllocate).stream().anyMatch(c -> !c.isEmpty());
    } catch (DeviceAnnotationException e) {
      return true;
    }
  }

  private static void checkCapacity(
      Map<String, Scenario.GpuSpec> gpus,
      Map<String, Usage> usage,
      List<Violation> out,
      boolean annotations) {
    usage.forEach(
        (uuid, u) -> {
          Scenario.GpuSpec g = gpus.get(uuid);
          String where = (annotations ? "annotated " : "") + "GPU " + uuid;
          if (g == null) {
            out.add(new Violation(Kind.UNKNOWN_DEVICE, where + " used by " + u.holders));
            return;
          }
          if (u.memory > g.memoryMiB()) {
            out.add(
                new Violation(
                    annotations ? Kind.ANNOTATED_OVERCOMMIT : Kind.MEMORY_OVERCOMMIT,
                    where
                        + ": "
                        + u.memory
                        + " MiB > "
                        + g.memoryMiB()
                        + " MiB, holders "
                        + u.holders,
                    Optional.of(uuid)));
          }
          if (u.cores > Scenario.TOTAL_CORES) {
            out.add(
                new Violation(
                    annotations ? Kind.ANNOTATED_OVERCOMMIT : Kind.CORES_OVERCOMMIT,
                    where + ": " + u.cores + "% cores > 100%, holders " + u.holders,
                    Optional.of(uuid)));
          }
          if (u.slots > Scenario.SPLIT_COUNT) {
            out.add(
                new Violation(
                    annotations ? Kind.ANNOTATED_OVERCOMMIT : Kind.SLOTS_OVERCOMMIT,
                    where + ": " + u.slots + " containers > split count " + Scenario.SPLIT_COUNT,
                    Optional.of(uuid)));
          }
          if (u.exclusive > 0 && u.slots > 1) {
            out.add(
                new Violation(
                    annotations ? Kind.ANNOTATED_OVERCOMMIT : Kind.EXCLUSIVE_SHARED,
                    where + ": an exclusive container shares it, holders " + u.holders,
                    Optional.of(uuid)));
          }
        });
  }

  /**
   * Adds one pod's containers to the per-card usage at each card's peak over the pod's phases
   * (Kubernetes' {@code PodRequests} rule, {@link UsageReconstructor#collapse(List, List)}).
   */
  private static void addPod(
      Map<String, Usage> usage,
      String pod,
      List<List<ContainerDevice>> containers,
      List<ContainerRole> roles) {
    Set<String> exclusive = new HashSet<>();
    containers.forEach(
        c ->
            c.stream()
                .filter(d -> d.usedcores() >= Scenario.TOTAL_CORES)
                .forEach(d -> exclusive.add(d.uuid())));
    Map<String, ContainerDevice> peaks = new TreeMap<>(); // a card its exclusive one shares: 2
    for (ContainerDevice d : UsageReconstructor.collapse(containers, roles)) {
      peaks.merge(
          d.uuid(),
          d,
          (a, b) ->
              new ContainerDevice(
                  0,
                  a.uuid(),
                  a.type(),
                  a.usedmem() + b.usedmem(),
                  a.usedcores() + b.usedcores(),
                  a.slots() + b.slots()));
    }
    peaks.forEach(
        (uuid, d) ->
            usage.computeIfAbsent(uuid, k -> new Usage()).add(pod, d, exclusive.contains(uuid)));
  }

  /** One card's usage: the sum over pods of each pod's peak. */
  private static final class Usage {
    long memory;
    long cores;
    int slots;
    int exclusive;
    final List<String> holders = new ArrayList<>();

    void add(String pod, ContainerDevice peak, boolean exclusiveContainer) {
      memory += peak.usedmem();
      cores += peak.usedcores();
      slots += peak.slots();
      if (exclusiveContainer) {
        exclusive++;
      }
      holders.add(
          pod
              + ":"
              + peak.usedmem()
              + "MiB/"
              + peak.usedcores()
              + "%"
              + (peak.slots() > 1 ? "/" + peak.slots() + " containers" : ""));
    }
  }
}
