package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.DevicePluginHandoff;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.reference.AllocateResult;
import dev.hamilock.reference.HamiDevicePlugin;
import dev.hamilock.reference.HamiNodeLock;
import dev.hamilock.testkit.ApiServerEmulator;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.yaml.snakeyaml.Yaml;

/**
 * The guide's gang ({@code src/test/resources/guide/gang-training.yaml}: PodGroup {@code
 * gang-training}, four pods with {@code nvidia.com/gpu: 1}, {@code gpumem: 3000}, {@code gpucores:
 * 30}) scheduled by two extender replicas — separate {@code ApiClient}s and {@link
 * KubernetesHamiStack} stacks — released at the same instant onto one node with two GPUs, and
 * started by a simulated kubelet whose device plugin is HAMi's (the reference Java port of its Go
 * plugin: it must accept what our binder wrote) or this library's {@link DevicePluginHandoff}.
 */
class GuideGangOverHttpTest {
  static final String NS = "default";
  static final String NODE = "gpu-node-1";
  static final List<String> GPUS =
      List.of(
          "GPU-7aebc545-cbd3-18a0-afce-76cae449702a", "GPU-9a3603f4-f66e-d48b-11ea-13e327064cca");
  static final String ALLOCATED = "hami.io/vgpu-devices-allocated";

  enum Plugin {
    HAMI_REFERENCE,
    HAMI_LOCK
  }

  /**
   * One kubelet Allocate: the pod it was starting, the pod the plugin served, what it handed out.
   */
  record Served(String kubeletPod, String servedPod, List<Slice> devices) {}

  /** One GPU slice handed out: device UUID, MiB, % of the card's cores. */
  record Slice(String uuid, int memoryMiB, int cores) {
    static Slice of(ContainerDevice d) {
      return new Slice(d.uuid(), d.usedmem(), d.usedcores());
    }
  }

  private ApiServerEmulator k8s;
  private final List<KubernetesHamiStack> replicas = new ArrayList<>();
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @BeforeEach
  void start() throws Exception {
    k8s = ApiServerEmulator.start();
    EmulatorObjects.createNode(
        k8s, PodBinderOverHttpTest.gpuNode(NODE, GPUS.toArray(String[]::new)));
    try (InputStream in = getClass().getResourceAsStream("/guide/gang-training.yaml")) {
      for (Object doc : new Yaml().loadAll(in)) {
        k8s.create(doc);
      }
    }
    for (int r = 0; r < 2; r++) {
      replicas.add(
          KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
              .retryPolicy(
                  RetryPolicy.builder()
                      .pollInterval(Duration.ofMillis(5))
                      .retryTimeout(Duration.ofSeconds(20))
                      .build())
              .build());
    }
  }

  @AfterEach
  void stop() {
    pool.shutdownNow();
    replicas.forEach(KubernetesHamiStack::close);
    k8s.close();
  }

  @ParameterizedTest
  @EnumSource(Plugin.class)
  void theGuidesGangBindsFromTwoReplicasAndEveryMemberGetsItsOwnSlice(Plugin kind)
      throws Exception {
    List<String> members =
        List.of("gang-worker-1", "gang-worker-2", "gang-worker-3", "gang-worker-4");
    CountDownLatch go = new CountDownLatch(1);
    Map<String, Future<BindResult>> binds = new LinkedHashMap<>();
    for (int i = 0; i < members.size(); i++) {
      KubernetesHamiStack replica = replicas.get(i % 2);
      String name = members.get(i);
      binds.put(
          name,
          pool.submit(
              () -> {
                go.await();
                PodView pod = EmulatorObjects.readPod(k8s, NS, name);
                FilterDecision d = replica.extenderFilter().filter(pod, List.of(NODE));
                return replica.podBinder().bind(NS, name, pod.uid(), d.node().orElseThrow());
              }));
    }
    Future<List<Served>> kubelet = pool.submit(() -> kubelet(kind, members.size()));
    go.countDown();

    for (Map.Entry<String, Future<BindResult>> b : binds.entrySet()) {
      BindResult r = b.getValue().get(30, TimeUnit.SECONDS);
      assertThat(r.outcome()).as("%s: %s", b.getKey(), r.reason()).isEqualTo(BindOutcome.BOUND);
    }
    List<Served> served = kubelet.get(30, TimeUnit.SECONDS);

    assertThat(served).extracting(Served::kubeletPod).containsExactlyInAnyOrderElementsOf(members);
    Map<String, Integer> cores = new HashMap<>();
    Map<String, Integer> memory = new HashMap<>();
    for (Served s : served) {
      assertThat(s.servedPod())
          .as("the plugin served the pod the kubelet started")
          .isEqualTo(s.kubeletPod());
      Map<String, String> ann = EmulatorObjects.annotations(k8s, NS, s.kubeletPod());
      assertThat(s.devices())
          .as("devices of %s", s.kubeletPod())
          .isEqualTo(
              PodDevicesCodec.decode(ann.get(ALLOCATED)).get(0).stream().map(Slice::of).toList());
      assertThat(ann).containsEntry("hami.io/bind-phase", "success");
      assertThat(EmulatorObjects.pod(k8s.get("pods", NS, s.kubeletPod()).orElseThrow()).nodeName())
          .contains(NODE);
      assertThat(s.devices())
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.memoryMiB()).isEqualTo(3000);
                assertThat(d.cores()).isEqualTo(30);
                cores.merge(d.uuid(), d.cores(), Integer::sum);
                memory.merge(d.uuid(), d.memoryMiB(), Integer::sum);
              });
    }
    assertThat(cores.keySet()).isSubsetOf(GPUS);
    assertThat(cores.values()).allSatisfy(c -> assertThat(c).isLessThanOrEqualTo(100));
    assertThat(memory.values()).allSatisfy(m -> assertThat(m).isLessThanOrEqualTo(24576));
    assertThat(EmulatorObjects.lock(k8s, NODE)).as("lock after the last hand-off").isNull();
  }

  /**
   * The kubelet: admits each pod bound to the node (in binding order, one Allocate per pod with one
   * container of one GPU) to the device plugin, which does not know which pod it is.
   */
  private List<Served> kubelet(Plugin kind, int expected) throws InterruptedException {
    HamiDevicePlugin hamiPlugin =
        new HamiDevicePlugin(
            k8s.newApiClient(Duration.ofSeconds(10)),
            HamiNodeLock.builder(k8s.newApiClient(Duration.ofSeconds(10))).build());
    KubernetesHamiStack pluginStack =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).watch(false).build();
    try {
      DevicePluginHandoff ours = pluginStack.devicePluginHandoff("NVIDIA");
      List<Served> served = new ArrayList<>();
      Set<String> admitted = ConcurrentHashMap.newKeySet();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (served.size() < expected && System.nanoTime() < deadline) {
        for (JsonNode p : k8s.list("pods", NS)) {
          String name = p.path("metadata").path("name").asText();
          if (!NODE.equals(p.path("spec").path("nodeName").asText()) || !admitted.add(name)) {
            continue;
          }
          if (kind == Plugin.HAMI_REFERENCE) {
            AllocateResult a = hamiPlugin.allocate(NODE, List.of(1));
            served.add(
                new Served(
                    name,
                    a.pod().map(v -> v.getMetadata().getName()).orElse(""),
                    a.containerDevices().isEmpty()
                        ? List.of()
                        : a.containerDevices().get(0).stream()
                            .map(d -> new Slice(d.uuid(), d.usedMem(), d.usedCores()))
                            .toList()));
          } else {
            HandoffResult h = ours.allocate(NODE, List.of(1));
            served.add(
                new Served(
                    name,
                    h.pod().map(o -> o.name()).orElse(""),
                    h.handedOut().isEmpty()
                        ? List.of()
                        : h.handedOut().get(0).devices().stream().map(Slice::of).toList()));
          }
        }
        Thread.sleep(1);
      }
      return served;
    } finally {
      pluginStack.close();
    }
  }
}
