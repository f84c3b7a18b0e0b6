package dev.hamilock.extender;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.bind.DevicePluginHandoff;
import dev.hamilock.bind.ExtenderFilter;
import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.GoDuration;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import dev.hamilock.extender.v1.ExtenderJson;
import dev.hamilock.extender.v1.Fixtures;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * An in-memory cluster with real HAMi registrations: node-a = 2x A40 (F-03, 46068 MiB each), node-b
 * = 1x Tesla T4 (F-01, 15360 MiB), node-c = no registration; NVIDIA discovered from the class path;
 * an extender over it.
 */
final class TestCluster {
  static final String NVIDIA_REGISTER = "hami.io/node-nvidia-register";

  final InMemoryCluster cluster = InMemoryCluster.create();
  final VendorRegistry registry = VendorRegistry.discover();
  final ExtenderConfig config;
  final NodeLockProvider locks;
  final HamiExtender extender;

  /**
   * What {@code HamiExtender.fromConfig} did before an extender was created from a stack: both
   * flows from the config's builders, reads refused on an interrupted thread.
   */
  static HamiExtender fromConfig(
      ExtenderConfig config,
      ClusterReader reader,
      ClusterWriter writer,
      VendorRegistry registry,
      NodeLockProvider locks) {
    java.util.Objects.requireNonNull(config, "config");
    ClusterReader r = InterruptibleReader.wrap(reader);
    return HamiExtender.create(
            filter(config, r, writer, registry).build(),
            binder(config, r, writer, registry, locks).build(),
            r,
            registry)
        .withMaxFilterNodes(config.serving().maxFilterNodes());
  }

  /** The Filter flow with the flags' policies, writing HAMi's Filter annotations. */
  static ExtenderFilter.Builder filter(
      ExtenderConfig config, ClusterReader reader, ClusterWriter writer, VendorRegistry registry) {
    return ExtenderFilter.builder(reader, registry)
        .fitter(config.schedulerFlags().podFitter(registry))
        .writeAnnotations(writer);
  }

  /** The bind flow with the flags' policies and retry policy. */
  static PodBinder.Builder binder(
      ExtenderConfig config,
      ClusterReader reader,
      ClusterWriter writer,
      VendorRegistry registry,
      NodeLockProvider locks) {
    return PodBinder.builder(reader, writer, registry, locks)
        .fitter(config.schedulerFlags().podFitter(registry))
        .retryPolicy(config.schedulerFlags().retryPolicy());
  }

  TestCluster(Duration retryTimeout) {
    cluster.addNode(
        NodeView.of("node-a", Map.of(NVIDIA_REGISTER, Fixtures.text("F-03-register-2xa40.value"))));
    cluster.addNode(
        NodeView.of("node-b", Map.of(NVIDIA_REGISTER, Fixtures.text("F-01-register-t4.value"))));
    cluster.addNode(NodeView.of("node-c", Map.of()));
    config =
        ExtenderConfig.builder()
            .port(0)
            .bindAddress("127.0.0.1")
            .schedulerFlags(
                HamiSchedulerFlags.parse(
                    "--node-lock-retry-timeout=" + GoDuration.format(retryTimeout),
                    "--extender-http-timeout=30s"))
            .build();
    locks =
        NodeLockProvider.cached(
            key ->
                StoreNodeLock.create(
                    cluster.lockStore(),
                    LockSettings.builder(config.schedulerFlags().lockSettings())
                        .key(key)
                        .ownerLiveness(cluster.ownerLiveness())
                        .build()));
    extender =
        HamiExtender.create(
            filter(config, cluster, cluster, registry).build(),
            binder(config, cluster, cluster, registry, locks)
                .retryPolicy(
                    RetryPolicy.builder()
                        .pollInterval(Duration.ofMillis(10))
                        .retryTimeout(retryTimeout)
                        .build())
                .build(),
            cluster,
            registry);
  }

  /**
   * The guide's gang member (fixture), renamed, as stored in the cluster (UID {@code uid-<name>}).
   */
  ObjectNode addGangWorker(String name, int gpumem) throws Exception {
    return addWorker(name, gpumem, true);
  }

  /** The guide's member, optionally without its pod-group label (then not a gang member). */
  ObjectNode addWorker(String name, int gpumem, boolean gang) throws Exception {
    return addWorker(name, gpumem, gang, 0);
  }

  /** As {@link #addWorker(String, int, boolean)}, stored with {@code spec.priority} (0: unset). */
  ObjectNode addWorker(String name, int gpumem, boolean gang, int priority) throws Exception {
    ObjectNode pod =
        (ObjectNode) ExtenderJson.readTree(Fixtures.bytes("guide-gang-worker-1.pod.json"));
    ((ObjectNode) pod.get("metadata")).put("name", name).put("uid", "uid-" + name);
    if (!gang) {
      ((ObjectNode) pod.get("metadata")).remove("labels");
    }
    ((ObjectNode) pod.at("/spec/containers/0/resources/limits"))
        .put("nvidia.com/gpumem", Integer.toString(gpumem));
    if (priority != 0) {
      ((ObjectNode) pod.get("spec")).put("priority", priority);
    }
    cluster.addPod(JsonViews.podView(pod));
    return pod;
  }

  /** A pod that asks for no device. */
  ObjectNode addPlainPod(String name) throws Exception {
    ObjectNode pod =
        (ObjectNode)
            ExtenderJson.readTree(
                Fixtures.utf8(
                    "{\"metadata\":{\"name\":\""
                        + name
                        + "\",\"namespace\":\"default\",\"uid\":\"uid-"
                        + name
                        + "\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}}"));
    cluster.addPod(JsonViews.podView(pod));
    return pod;
  }

  /** Makes a live non-gang pod hold the NVIDIA node lock of {@code node}. */
  LockOwner holdLock(String node) throws Exception {
    PodView holder = PodView.builder("default", "holder").uid("uid-holder").build();
    cluster.addPod(holder);
    LockOwner owner = LockOwner.of("default", "holder", "uid-holder");
    nvidiaLock().acquire(node, owner);
    return owner;
  }

  /**
   * A simulated kubelet + HAMi device plugin: whenever the lock holder of {@code node} is bound
   * (kubelet only calls Allocate for bound pods), Allocate hands its devices over and releases the
   * lock; until {@code n} were served or {@code cap} passed.
   *
   * @param each runs before every look at the lock (e.g. to sample threads)
   * @return the hand-offs made, in order
   */
  java.util.List<HandoffResult> serveLockHolders(String node, int n, Duration cap, Runnable each)
      throws Exception {
    DevicePluginHandoff plugin =
        DevicePluginHandoff.create(
            cluster, cluster, registry.vendor("NVIDIA").orElseThrow(), nvidiaLock());
    java.util.List<HandoffResult> served = new java.util.ArrayList<>();
    long deadline = System.nanoTime() + cap.toNanos();
    while (served.size() < n && System.nanoTime() < deadline) {
      each.run();
      var owner = nvidiaLock().read(node).flatMap(LockRecord::owner);
      boolean ownerBound =
          owner.isPresent()
              && cluster
                  .readPod(owner.get().namespace(), owner.get().name())
                  .map(p -> p.isBound())
                  .orElse(false);
      if (ownerBound) {
        served.add(plugin.allocateAll(node));
      } else {
        Thread.sleep(2);
      }
    }
    return served;
  }

  NodeLock nvidiaLock() {
    return locks.forKey(HamiAnnotations.MUTEX_LOCK);
  }

  /** Allocates node-b's T4 whole to a ResourceClaim through DRA (issue 28), next to its pods. */
  void claimTheT4Whole() {
    cluster.setDra(
        new DraObjects(
            List.of(
                new ResourceSliceView(
                    "node-b-gpu",
                    "gpu.nvidia.com",
                    "node-b",
                    1,
                    "node-b",
                    List.of(
                        new ResourceSliceView.Device(
                            "gpu-0",
                            Map.of("uuid", "GPU-9a3603f4-f66e-d48b-11ea-13e327064cca"),
                            Map.of())))),
            List.of(
                new ResourceClaimView(
                    "default",
                    "the-t4",
                    "u1",
                    true,
                    "node-b",
                    List.of(
                        new ResourceClaimView.Result(
                            "gpu.nvidia.com",
                            "node-b",
                            "gpu-0",
                            Optional.empty(),
                            Map.of(),
                            false)),
                    Set.of()))));
  }

  PodView pod(String name) throws Exception {
    return cluster.readPod("default", name).orElseThrow().view();
  }

  boolean lockHeld(String node) throws Exception {
    return cluster
        .readNode(node)
        .orElseThrow()
        .annotations()
        .containsKey(HamiAnnotations.MUTEX_LOCK);
  }
}
