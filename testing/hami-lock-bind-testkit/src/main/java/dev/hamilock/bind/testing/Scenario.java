package dev.hamilock.bind.testing;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.core.GangMembership;
import dev.hamilock.device.spi.codec.NodeRegistrationCodec;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.ContainerRole;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One concurrency scenario for the gang-bind property: NVIDIA nodes, gangs of pods, scheduler
 * replicas, and per-pod behaviour of the simulated device plugin and API server; immutable data
 * that any generator builds and any {@link ScenarioBackend} runs.
 *
 * @param replicas number of scheduler replicas (each pod names its replica)
 */
public record Scenario(List<NodeSpec> nodes, List<GangSpec> gangs, int replicas) {

  /** NVIDIA split count the simulated plugins register (HAMi {@code deviceSplitCount} default). */
  public static final int SPLIT_COUNT = 10;

  /** Compute of one card (core scaling 1). */
  public static final int TOTAL_CORES = 100;

  /** The namespace of every scenario pod. */
  public static final String NAMESPACE = "gangs";

  /** Validates and copies. @throws IllegalArgumentException on empty lists or replicas &lt; 1 */
  public Scenario {
    nodes = List.copyOf(nodes);
    gangs = List.copyOf(gangs);
    checkArgument(
        !nodes.isEmpty() && !gangs.isEmpty() && replicas >= 1,
        "a scenario needs nodes, gangs and at least one replica: %s nodes, %s gangs, %s replicas",
        nodes.size(),
        gangs.size(),
        replicas);
    for (GangSpec g : gangs) {
      for (PodSpec p : g.members()) {
        checkArgument(
            p.replica() >= 0 && p.replica() < replicas,
            "pod %s names replica %s of %s",
            p.name(),
            p.replica(),
            replicas);
      }
    }
  }

  /**
   * @return every pod, gang by gang
   */
  public List<PodSpec> pods() {
    List<PodSpec> out = new ArrayList<>();
    gangs.forEach(g -> out.addAll(g.members()));
    return out;
  }

  /**
   * @return device UUID to its GPU, over all nodes
   */
  public Map<String, GpuSpec> gpusByUuid() {
    Map<String, GpuSpec> out = new LinkedHashMap<>();
    nodes.forEach(n -> n.gpus().forEach(g -> out.put(g.uuid(), g)));
    return out;
  }

  /**
   * @return per node with a {@link GpuSpec#claimedByDra} card, NVIDIA's DRA ResourceSlice ({@code
   *     gpu.nvidia.com}, pool = node, devices {@code gpu-<i>} with attribute {@code uuid}) and one
   *     allocated claim per claimed card; {@link DraObjects#NONE} when none is claimed
   */
  public DraObjects draObjects() {
    List<ResourceSliceView> slices = new ArrayList<>();
    List<ResourceClaimView> claims = new ArrayList<>();
    for (NodeSpec n : nodes) {
      List<ResourceSliceView.Device> devices = new ArrayList<>();
      for (int i = 0; i < n.gpus().size(); i++) {
        GpuSpec g = n.gpus().get(i);
        devices.add(new ResourceSliceView.Device("gpu-" + i, Map.of("uuid", g.uuid()), Map.of()));
        if (g.claimedByDra()) {
          claims.add(
              new ResourceClaimView(
                  "dra",
                  "claim-" + n.name() + "-" + i,
                  "",
                  true,
                  n.name(),
                  List.of(
                      new ResourceClaimView.Result(
                          "gpu.nvidia.com",
                          n.name(),
                          "gpu-" + i,
                          Optional.empty(),
                          Map.of(),
                          false)),
                  Set.of()));
        }
      }
      if (n.gpus().stream().anyMatch(GpuSpec::claimedByDra)) {
        slices.add(
            new ResourceSliceView(
                n.name() + "-gpu.nvidia.com", "gpu.nvidia.com", n.name(), 1, n.name(), devices));
      }
    }
    return claims.isEmpty() ? DraObjects.NONE : new DraObjects(slices, claims);
  }

  /**
   * @return the gang of each pod name
   */
  public Map<String, String> gangOf() {
    Map<String, String> out = new LinkedHashMap<>();
    gangs.forEach(g -> g.members().forEach(p -> out.put(p.name(), g.name())));
    return out;
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("Scenario[replicas=").append(replicas);
    nodes.forEach(n -> b.append(", ").append(n));
    gangs.forEach(g -> b.append(", ").append(g));
    return b.append(']').toString();
  }

  /**
   * @param gpus in registration order
   */
  public record NodeSpec(String name, List<GpuSpec> gpus) {
    /** Validates and copies. */
    public NodeSpec {
      Objects.requireNonNull(name, "name");
      gpus = List.copyOf(gpus);
      checkArgument(!gpus.isEmpty(), "node %s needs at least one GPU", name);
    }

    /**
     * @return the node with HAMi's JSON registration ({@code hami.io/node-nvidia-register}, encoded
     *     by the SPI codec) and allocatable {@code nvidia.com/gpu}
     */
    public NodeView toNodeView() {
      List<DeviceInfo> devices = new ArrayList<>();
      for (int i = 0; i < gpus.size(); i++) {
        GpuSpec g = gpus.get(i);
        devices.add(
            new DeviceInfo(
                g.uuid(),
                i,
                SPLIT_COUNT,
                g.memoryMiB(),
                TOTAL_CORES,
                g.type(),
                0,
                "hami-core",
                List.of(),
                true,
                "NVIDIA"));
      }
      return new NodeView(
          name,
          Map.of(),
          Map.of("hami.io/node-nvidia-register", NodeRegistrationCodec.encodeJson(devices)),
          Map.of("nvidia.com/gpu", BigDecimal.valueOf((long) gpus.size() * SPLIT_COUNT)));
    }
  }

  /**
   * @param uuid device UUID ({@code GPU-…})
   * @param memoryMiB device memory in MiB
   * @param type model text, e.g. {@code NVIDIA-A100-SXM4-40GB}
   * @param claimedByDra whether an allocated ResourceClaim holds the whole card ({@link
   *     #draObjects()}): no HAMi slice may be handed out on it
   */
  public record GpuSpec(String uuid, int memoryMiB, String type, boolean claimedByDra) {
    /** Validates. */
    public GpuSpec {
      Objects.requireNonNull(uuid, "uuid");
      Objects.requireNonNull(type, "type");
      checkArgument(memoryMiB > 0, "memoryMiB must be positive: %s", memoryMiB);
    }

    /** A card no ResourceClaim holds. */
    public GpuSpec(String uuid, int memoryMiB, String type) {
      this(uuid, memoryMiB, type, false);
    }
  }

  /** A gang: pods sharing the label {@code scheduling.x-k8s.io/pod-group}. */
  public record GangSpec(String name, List<PodSpec> members) {
    /** Validates and copies. */
    public GangSpec {
      Objects.requireNonNull(name, "name");
      members = List.copyOf(members);
    }
  }

  /** What the simulated API server does to a pod's Binding POST. */
  public enum BindingFault {
    /** Normal. */
    NONE,
    /** Times out without applying (the binder must clean up). */
    LOST,
    /** Applies, then times out (the binder must find it bound, HAMi#2645). */
    APPLIED_BUT_TIMED_OUT,
    /**
     * Times out without applying, and the API server applies it later as it was sent: when the next
     * Binding of any pod is posted (the binder must never let it bind a pod it cleaned up). Only
     * where {@link ScenarioBackend#injectBindingFault} says so (in memory); elsewhere {@link
     * #NONE}.
     */
    LANDS_LATE
  }

  /**
   * One pod: container {@code main} after its init containers (if any).
   *
   * @param name pod name (namespace {@link #NAMESPACE})
   * @param gpus {@code nvidia.com/gpu}
   * @param memoryMiB {@code nvidia.com/gpumem} in MiB; 0 if a percentage is requested
   * @param memoryPercentage {@code nvidia.com/gpumem-percentage}; 0 if memory is requested
   * @param cores {@code nvidia.com/gpucores} (100 = exclusive card)
   * @param replica index of the scheduler replica that schedules it
   * @param allocateDelayMicros unscaled time the simulated Allocate takes (0–30 000 µs)
   * @param pluginFails whether the simulated device plugin fails its Allocate
   * @param bindingFault what the API server does to its Binding
   * @param allocateStallsPastLockTimeout whether its Allocate stalls past the lock timeout
   *     (HAMi#3096): the shared {@link ScenarioClock} jumps twice by the lock timeout and a second
   *     before the Allocate proceeds, so {@link ScenarioGenerator} sets it only with one node
   * @param initContainers each asking one card, in order; empty for a pod with only {@code main}
   * @param lockRemoval whether, and when, another writer removes the node lock during its bind
   */
  public record PodSpec(
      String name,
      int gpus,
      int memoryMiB,
      int memoryPercentage,
      int cores,
      int replica,
      int allocateDelayMicros,
      boolean pluginFails,
      BindingFault bindingFault,
      boolean allocateStallsPastLockTimeout,
      List<InitContainerSpec> initContainers,
      LockRemoval lockRemoval) {

    /** A pod with only {@code main}, no stalled Allocate and no lock removal. */
    public PodSpec(
        String name,
        int gpus,
        int memoryMiB,
        int memoryPercentage,
        int cores,
        int replica,
        int allocateDelayMicros,
        boolean pluginFails,
        BindingFault bindingFault) {
      this(
          name,
          gpus,
          memoryMiB,
          memoryPercentage,
          cores,
          replica,
          allocateDelayMicros,
          pluginFails,
          bindingFault,
          false,
          List.of(),
          LockRemoval.NONE);
    }

    /**
     * @return this pod with a stalled (or not) Allocate
     */
    public PodSpec withAllocateStall(boolean stalls) {
      return new PodSpec(
          name,
          gpus,
          memoryMiB,
          memoryPercentage,
          cores,
          replica,
          allocateDelayMicros,
          pluginFails,
          bindingFault,
          stalls,
          initContainers,
          lockRemoval);
    }

    /**
     * @return this pod with those init containers and that lock removal
     */
    public PodSpec withOtherActors(List<InitContainerSpec> inits, LockRemoval removal) {
      return new PodSpec(
          name,
          gpus,
          memoryMiB,
          memoryPercentage,
          cores,
          replica,
          allocateDelayMicros,
          pluginFails,
          bindingFault,
          allocateStallsPastLockTimeout,
          inits,
          removal);
    }

    /** Validates. */
    public PodSpec {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(bindingFault, "bindingFault");
      initContainers = List.copyOf(initContainers);
      Objects.requireNonNull(lockRemoval, "lockRemoval");
      checkArgument(
          gpus >= 1
              && memoryMiB >= 0
              && memoryPercentage >= 0
              && memoryPercentage <= 100
              && cores >= 0
              && cores <= 100
              && allocateDelayMicros >= 0,
          "invalid pod spec %s: gpus %s, memoryMiB %s, memoryPercentage %s, cores %s, allocateDelayMicros %s",
          name,
          gpus,
          memoryMiB,
          memoryPercentage,
          cores,
          allocateDelayMicros);
    }

    /**
     * @return each container's role in allocation order (init containers, then {@code main}), from
     *     this spec alone: a checker's ground truth, independent of {@link
     *     PodView#containerRoles()}
     */
    public List<ContainerRole> containerRoles() {
      List<ContainerRole> out = new ArrayList<>();
      initContainers.forEach(
          c -> out.add(c.sidecar() ? ContainerRole.SIDECAR : ContainerRole.INIT));
      out.add(ContainerRole.APP);
      return List.copyOf(out);
    }

    /**
     * @return whether the pod asks for whole cards' compute (exclusive use)
     */
    public boolean exclusive() {
      return cores == TOTAL_CORES;
    }

    /**
     * @param gang its PodGroup name
     * @return the pod view: container {@code main} with NVIDIA limits, after its {@link
     *     #initContainers} ({@code sidecar-i} with {@code restartPolicy: Always}, {@code init-i}
     *     without), each with one card, {@code gpumem} and {@code gpucores}
     */
    public PodView toPodView(String gang) {
      Map<String, BigDecimal> limits = new LinkedHashMap<>();
      limits.put("nvidia.com/gpu", BigDecimal.valueOf(gpus));
      if (memoryMiB > 0) {
        limits.put("nvidia.com/gpumem", BigDecimal.valueOf(memoryMiB));
      }
      if (memoryPercentage > 0) {
        limits.put("nvidia.com/gpumem-percentage", BigDecimal.valueOf(memoryPercentage));
      }
      limits.put("nvidia.com/gpucores", BigDecimal.valueOf(cores));
      return PodView.builder(NAMESPACE, name)
          .labels(Map.of(GangMembership.POD_GROUP_LABEL, gang))
          .initContainers(initContainers.stream().map(InitContainerSpec::toContainerView).toList())
          .containers(List.of(new ContainerView("main", "cuda", limits, Map.of())))
          .build();
    }
  }

  /**
   * An init container asking one card: a native sidecar ({@code restartPolicy: Always}, running
   * from its start to the pod's end) or a run-to-completion init container. Kubernetes counts the
   * pod's peak over its phases ({@code PodRequests}), per card here.
   *
   * @param index its position among the pod's init containers (names it)
   * @param sidecar whether it is a native sidecar
   * @param memoryMiB {@code nvidia.com/gpumem} in MiB; positive
   * @param cores {@code nvidia.com/gpucores}, 0–100
   */
  public record InitContainerSpec(int index, boolean sidecar, int memoryMiB, int cores) {
    /** Validates. */
    public InitContainerSpec {
      checkArgument(
          index >= 0 && memoryMiB > 0 && cores >= 0 && cores <= TOTAL_CORES,
          "invalid init container %s: memoryMiB %s, cores %s",
          index,
          memoryMiB,
          cores);
    }

    ContainerView toContainerView() {
      Map<String, BigDecimal> limits = new LinkedHashMap<>();
      limits.put("nvidia.com/gpu", BigDecimal.ONE);
      limits.put("nvidia.com/gpumem", BigDecimal.valueOf(memoryMiB));
      limits.put("nvidia.com/gpucores", BigDecimal.valueOf(cores));
      ContainerView c =
          new ContainerView((sidecar ? "sidecar-" : "init-") + index, "cuda", limits, Map.of());
      return sidecar ? c.withRestartPolicy(ContainerView.RESTART_ALWAYS) : c;
    }
  }

  /**
   * Whether, and when, another writer removes the node lock while a pod's binder holds it ({@link
   * ScenarioBackend#removeLockAsAnotherWriter}).
   */
  public enum LockRemoval {
    /** Nobody removes it. */
    NONE,
    /**
     * Right after the binder, holding the lock, read the node's usage (before it writes its
     * allocation and confirms its lock): the binder must notice at its confirmation and not bind.
     */
    BEFORE_CONFIRMATION,
    /**
     * Right before the Binding POST, which no node annotation can make conditional; counted and
     * reported, and the next binder on the node must see the pod in flight (no swapped allocation).
     */
    AFTER_CONFIRMATION,
    /**
     * At {@link #BEFORE_CONFIRMATION}, HAMi's scheduler on a skewed clock takes the lock over
     * ({@link ScenarioBackend#takeOverLockWithSkewedClock}); the binder must end {@code CONTENDED}
     * with no Binding and leave the new holder's lock untouched.
     */
    SKEWED_TAKEOVER
  }
}
