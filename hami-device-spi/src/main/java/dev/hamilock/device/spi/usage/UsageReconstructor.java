package dev.hamilock.device.spi.usage;

import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.view.ContainerRole;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Clock;
import java.time.Instant;
import java.time.InstantSource;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds node device usage from pods, as HAMi's pod cache and getNodesUsage do ({@code
 * pkg/scheduler/scheduler.go}, {@code pkg/device/pods.go}; spec §2.4, V76-V77), but failing closed:
 * an undecodable allocated annotation makes the node {@link NodeUsage.Status#USAGE_UNKNOWN} (HAMi
 * skips it, spec §7.19). Only pods with {@code hami.io/vgpu-node} count, on {@code spec.nodeName}
 * when bound (another annotated node is a {@link NodeMismatch}, volcano#5532), else on the
 * annotated node unless their {@value #RESERVATION} expired; Succeeded/Failed pods count nothing. A
 * vendor's devices the pod got through DRA ({@link VendorRegistry#viaDra}) count only through
 * {@link #plusDra}. HAMi's shrink after init containers end is not modelled (usage stays at the
 * init peak). Independent of pod order; thread-safe.
 */
public final class UsageReconstructor {
  private static final Logger LOG = LoggerFactory.getLogger(UsageReconstructor.class);

  private final VendorRegistry registry;
  private final DraUsage dra;
  private final InstantSource clock;

  /** A preemptor's reservation of the slices its victims free; value {@code <node>,<expiry>}. */
  public static final String RESERVATION = "hamilock.dev/preemption-reservation";

  /** {@link #UsageReconstructor(VendorRegistry, InstantSource)} on the system clock. */
  public UsageReconstructor(VendorRegistry registry) {
    this(registry, Clock.systemUTC());
  }

  /**
   * @param clock what a {@value #RESERVATION} expiry is compared with
   * @throws dev.hamilock.device.spi.VendorRegistrationException when two vendors map the same DRA
   *     driver ({@link DeviceVendor#draDrivers()})
   */
  public UsageReconstructor(VendorRegistry registry, InstantSource clock) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.dra = new DraUsage(registry);
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** {@return the {@value #RESERVATION} value {@code <node>,<until>} (RFC 3339, UTC)} */
  public static String reservation(String node, Instant until) {
    return node + "," + until;
  }

  /**
   * A pod's {@value #RESERVATION} expiry, bound or not.
   *
   * @return empty without the annotation; {@link Instant#MAX} (held, logged) when malformed
   */
  public static Optional<Instant> reservedUntil(PodView pod) {
    String v = pod.annotations().get(RESERVATION);
    if (v == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(Instant.parse(v.substring(v.lastIndexOf(',') + 1)));
    } catch (DateTimeParseException e) {
      LOG.warn("pod {}: malformed {} \"{}\": held", pod.key(), RESERVATION, v);
      return Optional.of(Instant.MAX);
    }
  }

  /**
   * @return one pod's contribution: empty if the pod has no {@code hami.io/vgpu-node}, has
   *     Succeeded/Failed or is unbound with an expired {@value #RESERVATION}; else its collapsed
   *     entries (on {@code spec.nodeName} when bound), or its decode error
   */
  public Optional<PodUsage> podUsage(PodView pod) {
    String annotated = pod.annotations().get(HamiAnnotations.VGPU_NODE);
    if (annotated == null
        || annotated.isEmpty()
        || pod.phase().isFinished()
        || (pod.nodeName().isEmpty()
            && reservedUntil(pod).filter(t -> !clock.instant().isBefore(t)).isPresent())) {
      return Optional.empty();
    }
    String node = pod.nodeName().orElse(annotated);
    Optional<NodeMismatch> mismatch = Optional.empty();
    if (!node.equals(annotated)) {
      NodeMismatch m = new NodeMismatch(pod.key(), annotated, node);
      LOG.warn("{}", m.message());
      mismatch = Optional.of(m);
    }
    List<ContainerDevice> all = new ArrayList<>();
    for (DeviceVendor v : registry.vendors()) {
      if (registry.viaDra(pod, v.commonWord())) {
        continue; // its ResourceClaim counts the devices (plusDra)
      }
      Optional<List<List<ContainerDevice>>> containers;
      try {
        containers = v.decodeAllocated(pod);
      } catch (DeviceAnnotationException e) {
        String why = "has undecodable " + v.allocatedAnnotationKey() + ": " + e.getMessage();
        LOG.debug("pod {} {}", pod.key(), why);
        return Optional.of(
            new PodUsage(pod.key(), pod.uid(), node, List.of(), Optional.of(why), mismatch));
      }
      containers.ifPresent(c -> all.addAll(collapse(c, pod.containerRoles())));
    }
    return Optional.of(new PodUsage(pod.key(), pod.uid(), node, all, Optional.empty(), mismatch));
  }

  /** The collapsed usage a pod would contribute on {@code nodeName} with {@code devices}. */
  public PodUsage podUsage(PodView pod, String nodeName, PodDevices devices) {
    List<ContainerDevice> all = new ArrayList<>();
    List<ContainerRole> roles = pod.containerRoles();
    devices.byVendor().values().forEach(c -> all.addAll(collapse(c, roles)));
    return new PodUsage(pod.key(), pod.uid(), nodeName, all, Optional.empty(), Optional.empty());
  }

  /**
   * Collapses one vendor's per-container entries to each card's peak over the pod's phases
   * (Kubernetes' {@code PodRequests}, {@code k8s.io/component-helpers/resource} v0.37, per card):
   * init phase {@code i} = the sidecars declared before it + init {@code i}; app phase = all
   * sidecars + all apps (HAMi PR#2723). Memory (MiB) and cores (% of a card) are each the largest
   * phase sum, slots the most containers on the card in one phase (&ge; 1). Fewer entries than
   * roles (HAMi's padding drift, spec §7.25) all count as {@link ContainerRole#APP}. An exclusive
   * container (cores &ge; 100) sharing its card in a phase is split into its own entry and the
   * rest, so that {@link DeviceUsage#overCommit()} sees the card shared.
   *
   * @param containers entries per container in allocation order (init containers first)
   * @param roles each container's role ({@link PodView#containerRoles()}); entries beyond it count
   *     as {@link ContainerRole#APP}
   * @return one entry per UUID, sorted by UUID, with {@code slots} &ge; 1 (two for a shared
   *     exclusive card)
   */
  public static List<ContainerDevice> collapse(
      List<List<ContainerDevice>> containers, List<ContainerRole> roles) {
    Map<String, CardPhases> cards = new TreeMap<>();
    boolean aligned = containers.size() >= roles.size();
    for (int i = 0; i < containers.size(); i++) {
      ContainerRole role = aligned && i < roles.size() ? roles.get(i) : ContainerRole.APP;
      for (ContainerDevice d : containers.get(i)) {
        cards.computeIfAbsent(d.uuid(), k -> new CardPhases(d.type())).add(role, d);
      }
    }
    List<ContainerDevice> out = new ArrayList<>(cards.size());
    cards.forEach((uuid, c) -> c.peak(uuid, aligned, out));
    return out;
  }

  /** One card's sums over the phases of one pod, for {@link #collapse}. */
  private static final class CardPhases {
    private final String type;
    private Phase sidecars = Phase.NONE; // running from their start to the pod's end
    private Phase apps = Phase.NONE;
    private long initMem; // each the largest over the init phases
    private long initCores;
    private int initSlots;
    private ContainerDevice sharedExclusive; // an exclusive container beside another at once

    CardPhases(String type) {
      this.type = type;
    }

    void add(ContainerRole role, ContainerDevice d) {
      switch (role) {
        case SIDECAR -> sidecars = sidecars.plus(Phase.of(d));
        case APP -> apps = apps.plus(Phase.of(d));
        case INIT -> {
          Phase phase = sidecars.plus(Phase.of(d));
          initMem = Math.max(initMem, phase.mem());
          initCores = Math.max(initCores, phase.cores());
          initSlots = Math.max(initSlots, phase.slots());
          share(phase);
        }
      }
    }

    void peak(String uuid, boolean aligned, List<ContainerDevice> out) {
      Phase app = sidecars.plus(apps);
      share(app);
      long mem = Math.max(initMem, app.mem());
      long cores = Math.max(initCores, app.cores());
      int slots = Math.max(Math.max(initSlots, app.slots()), 1);
      ContainerDevice x = aligned ? sharedExclusive : null;
      if (x == null) {
        out.add(new ContainerDevice(0, uuid, type, sat(mem), sat(cores), slots));
      } else { // the exclusive entry on its own, so that DeviceUsage sees the card shared
        out.add(new ContainerDevice(0, uuid, type, x.usedmem(), x.usedcores(), 1));
        out.add(
            new ContainerDevice(
                0, uuid, type, sat(mem - x.usedmem()), sat(cores - x.usedcores()), slots - 1));
      }
    }

    private void share(Phase phase) {
      if (sharedExclusive == null && phase.slots() > 1) {
        sharedExclusive = phase.exclusive();
      }
    }
  }

  /** The containers on one card at once: sums, count, first with usedcores &ge; 100 (or null). */
  private record Phase(long mem, long cores, int slots, ContainerDevice exclusive) {
    static final Phase NONE = new Phase(0, 0, 0, null);

    static Phase of(ContainerDevice d) {
      return new Phase(d.usedmem(), d.usedcores(), 1, d.usedcores() >= 100 ? d : null);
    }

    Phase plus(Phase o) {
      return new Phase(
          mem + o.mem,
          cores + o.cores,
          slots + o.slots,
          exclusive != null ? exclusive : o.exclusive);
    }
  }

  private static int sat(long v) {
    return (int) Math.min(Integer.MAX_VALUE, v);
  }

  /**
   * Rows for every device the node registers (all vendors, registration order), no usage; a card
   * UUID registered twice makes its registration undecodable.
   *
   * @return usage with zero use; UNREGISTERED when no vendor registered devices
   */
  public NodeUsage registeredDevices(NodeView node) {
    List<DeviceUsage> rows = new ArrayList<>();
    Map<String, String> errors = new LinkedHashMap<>();
    Set<String> ids = new HashSet<>();
    for (DeviceVendor v : registry.vendors()) {
      if (!v.isRegisteredOn(node)) {
        continue;
      }
      try {
        List<DeviceInfo> devices = v.decodeNodeDevices(node);
        for (DeviceInfo d : devices) {
          if (!ids.add(d.id())) {
            throw new DeviceAnnotationException("card " + d.id() + " registered twice", d.id());
          }
        }
        devices.forEach(d -> rows.add(DeviceUsage.idle(d)));
      } catch (DeviceAnnotationException e) {
        LOG.debug(
            "node {}: {} registration rejected: {}", node.name(), v.commonWord(), e.getMessage());
        errors.put(v.commonWord(), e.getMessage());
      }
    }
    return NodeUsage.of(node, rows, errors);
  }

  /** {@link #nodeUsage(NodeView, Collection, DraObjects)} without DRA allocations. */
  public NodeUsage nodeUsage(NodeView node, Collection<PodView> pods) {
    return nodeUsage(node, pods, DraObjects.NONE);
  }

  /**
   * Usage of one node from the given pods and DRA allocations ({@link #plusDra}).
   *
   * @param pods any pods (pods naming other nodes are ignored)
   * @param dra ResourceSlices and ResourceClaims ({@link DraObjects#NONE} for none)
   * @return the node's usage; USAGE_UNKNOWN when a pod is undecodable (reason naming the pods,
   *     sorted) or a DRA device unresolvable
   */
  public NodeUsage nodeUsage(NodeView node, Collection<PodView> pods, DraObjects dra) {
    return clusterUsage(List.of(node), pods, dra).get(node.name());
  }

  /**
   * Adds the devices ResourceClaims allocated on the node through DRA, as kube-scheduler's {@code
   * allocateddevices.go} {@code foreachAllocatedDevice} counts them: every non-{@code adminAccess}
   * result of a mapped driver ({@link DeviceVendor#draDrivers()}) on this node (its slice's {@code
   * spec.nodeName}, else the allocation node, else the pool name), matched to a registered card by
   * its parent UUID (MIG) or UUID attribute. An exclusive device or a partition takes the whole
   * card once; a share one slot, its consumed memory in MiB (rounded up; none: the whole card) and
   * its consumed cores, else cores in proportion to memory. An unresolvable result makes the usage
   * {@link NodeUsage.Status#USAGE_UNKNOWN}.
   *
   * @param usage the node's usage from its pods (an UNREGISTERED node is returned as is)
   */
  public NodeUsage plusDra(NodeUsage usage, DraObjects dra) {
    return this.dra.plus(usage, dra);
  }

  /** {@link #clusterUsage(Collection, Collection, DraObjects)} without DRA allocations. */
  public Map<String, NodeUsage> clusterUsage(Collection<NodeView> nodes, Collection<PodView> pods) {
    return clusterUsage(nodes, pods, DraObjects.NONE);
  }

  /**
   * Usage of many nodes at once with DRA allocations ({@link #plusDra}); each pod is decoded once.
   *
   * @param pods all relevant pods
   * @param dra ResourceSlices and ResourceClaims ({@link DraObjects#NONE} for none)
   * @return node name to usage, in the order of {@code nodes}
   */
  public Map<String, NodeUsage> clusterUsage(
      Collection<NodeView> nodes, Collection<PodView> pods, DraObjects dra) {
    Map<String, List<PodUsage>> byNode = new HashMap<>();
    for (PodView p : pods) {
      podUsage(p)
          .ifPresent(u -> byNode.computeIfAbsent(u.nodeName(), k -> new ArrayList<>()).add(u));
    }
    Map<String, NodeUsage> out = new LinkedHashMap<>();
    for (NodeView n : nodes) {
      NodeUsage u = apply(registeredDevices(n), byNode.getOrDefault(n.name(), List.of()));
      out.put(n.name(), plusDra(u, dra));
    }
    return out;
  }

  /**
   * Applies the contributions of a node's pods to its rows ({@code base}, typically {@link
   * #registeredDevices}) with {@link NodeUsage#plus}, in pod-key order, so that the result does not
   * depend on their order.
   */
  public static NodeUsage apply(NodeUsage base, Collection<PodUsage> pods) {
    NodeUsage u = base;
    for (PodUsage p : pods.stream().sorted(Comparator.comparing(PodUsage::podKey)).toList()) {
      u = u.plus(p);
    }
    return u;
  }
}
