package dev.hamilock.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.NodeRegistrationCodec;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Shared test data: NVIDIA nodes in HAMi's JSON registration, GPU pods, locks on an in-memory
 * cluster.
 */
public final class Fixtures {
  public static final VendorRegistry REGISTRY = VendorRegistry.discover();
  public static final String NS = "default";
  public static final String LOCK_KEY = "hami.io/mutex.lock";
  public static final String TO_ALLOCATE = "hami.io/vgpu-devices-to-allocate";
  public static final String ALLOCATED = "hami.io/vgpu-devices-allocated";
  public static final String REGISTER = "hami.io/node-nvidia-register";

  /** 2026-06-14T15:05:03Z: the clock of every binder in unit tests. */
  public static final Instant NOW = Instant.parse("2026-06-14T15:05:03Z");

  public static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  private Fixtures() {}

  /** GPU UUID {@code GPU-<node>-<i>}. */
  public static String gpu(String node, int i) {
    return "GPU-" + node + "-" + i;
  }

  /** A node with {@code gpus} healthy cards of {@code memMiB}, split count 10, cores 100. */
  public static NodeView node(String name, int gpus, int memMiB) {
    List<DeviceInfo> devices = new ArrayList<>();
    for (int i = 0; i < gpus; i++) {
      devices.add(
          new DeviceInfo(
              gpu(name, i),
              i,
              10,
              memMiB,
              100,
              "NVIDIA-Tesla T4",
              0,
              "hami-core",
              List.of(),
              true,
              "NVIDIA"));
    }
    return NodeView.of(name, Map.of(REGISTER, NodeRegistrationCodec.encodeJson(devices)));
  }

  /** A pod with one container asking {@code gpus} GPUs of {@code memMiB} MiB and {@code cores}%. */
  public static PodView pod(String name, int gpus, int memMiB, int cores) {
    return PodView.builder(NS, name)
        .containers(List.of(container("main", gpus, memMiB, cores)))
        .build();
  }

  /** The same, labelled as a gang member. */
  public static PodView gangPod(String name, int gpus, int memMiB, int cores) {
    return pod(name, gpus, memMiB, cores).toBuilder()
        .labels(Map.of("scheduling.x-k8s.io/pod-group", "gang"))
        .build();
  }

  public static ContainerView container(String name, int gpus, int memMiB, int cores) {
    Map<String, BigDecimal> limits = new LinkedHashMap<>();
    limits.put("nvidia.com/gpu", BigDecimal.valueOf(gpus));
    limits.put("nvidia.com/gpumem", BigDecimal.valueOf(memMiB));
    limits.put("nvidia.com/gpucores", BigDecimal.valueOf(cores));
    return new ContainerView(name, "cuda", limits, Map.of());
  }

  /** Node locks on the cluster's node annotations (5 min timeout, liveness from the cluster). */
  public static NodeLockProvider locks(InMemoryCluster cluster) {
    return NodeLockProvider.cached(key -> lock(cluster, key));
  }

  public static NodeLock lock(InMemoryCluster cluster, String key) {
    return lockOver(cluster.lockStore(), cluster, CLOCK, key);
  }

  /** A {@code key} lock over {@code store} (5 min timeout, liveness from the cluster). */
  public static NodeLock lockOver(
      LockStore store, InMemoryCluster cluster, InstantSource clock, String key) {
    return StoreNodeLock.create(
        store,
        LockSettings.builder()
            .key(key)
            .lockTimeout(Duration.ofMinutes(5))
            .clock(clock)
            .ownerLiveness(cluster.ownerLiveness())
            .build());
  }

  /** Filters {@code pod} onto {@code node} alone, HAMi's Filter annotations written; asserts it. */
  public static void filteredOnto(InMemoryCluster cluster, PodView pod, String node) {
    FilterDecision d =
        ExtenderFilter.builder(cluster, REGISTRY)
            .writeAnnotations(cluster)
            .build()
            .filter(pod, List.of(node));
    assertThat(d.node()).as("%s", d).contains(node);
  }

  /** A binder on the cluster with the fixed clock and fast gang retries (5 ms polls, 200 ms). */
  public static PodBinder.Builder binder(InMemoryCluster cluster) {
    return PodBinder.builder(cluster, cluster, REGISTRY, locks(cluster))
        .clock(CLOCK)
        .retryPolicy(RETRY);
  }

  /** The retry policy of {@link #binder}: 5 ms poll, 200 ms retry timeout. */
  public static final RetryPolicy RETRY =
      RetryPolicy.builder()
          .pollInterval(Duration.ofMillis(5))
          .retryTimeout(Duration.ofMillis(200))
          .build();

  /** The device-plugin hand-off of NVIDIA on the cluster, with its own lock instance. */
  public static DevicePluginHandoff handoff(InMemoryCluster cluster) {
    return handoff(cluster, cluster);
  }

  /** As {@link #handoff(InMemoryCluster)} over other ports (e.g. a forwarding decorator of it). */
  public static <P extends ClusterReader & ClusterWriter> DevicePluginHandoff handoff(
      P ports, InMemoryCluster cluster) {
    return DevicePluginHandoff.create(
        ports, ports, REGISTRY.vendor("NVIDIA").orElseThrow(), lock(cluster, LOCK_KEY));
  }

  /** A Running pod "other" on n1, served {@code mib} MiB and 30 % of {@code card}. */
  public static void addServedPodOn(InMemoryCluster cluster, String card, int mib) {
    cluster.addPod(
        pod("other", 1, mib, 30).toBuilder()
            .phase(PodView.Phase.RUNNING)
            .annotations(
                Map.of(
                    ALLOCATED,
                    card + ",NVIDIA," + mib + ",30:;",
                    TO_ALLOCATE,
                    ";",
                    "hami.io/vgpu-node",
                    "n1",
                    "hami.io/bind-phase",
                    "success"))
            .build(),
        java.util.Optional.of("n1"));
  }

  /** The value of the node's lock annotation, or null. */
  public static String lockValue(InMemoryCluster cluster, String node) {
    return cluster.nodes().stream()
        .filter(n -> n.name().equals(node))
        .findFirst()
        .orElseThrow()
        .annotations()
        .get(LOCK_KEY);
  }

  /** The stored pod's annotations. */
  public static Map<String, String> annotations(InMemoryCluster cluster, String pod) {
    return cluster.pods().stream()
        .filter(p -> p.view().name().equals(pod))
        .findFirst()
        .orElseThrow()
        .view()
        .annotations();
  }
}
