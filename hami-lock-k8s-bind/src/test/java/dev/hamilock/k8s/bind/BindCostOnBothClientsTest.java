package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.HamiFlows;
import dev.hamilock.bind.HamiStack;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.fabric8.Fabric8LockStack;
import dev.hamilock.fabric8.Fabric8WatchTransport;
import dev.hamilock.fabric8.bind.Fabric8HamiStack;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.k8s.watch.KubeWatchTransport;
import dev.hamilock.testkit.ApiServerEmulator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Request counts of the bind flow on both clients (issue 27 item 2, in the manner of
 * hami-lock-k8s's {@code ApiCostOnBackendsTest}): one uncontended bind of the guide's gang member
 * through client-java's {@link KubernetesHamiStack} and through fabric8's {@link Fabric8HamiStack}
 * sends the same 8 requests, counted by verb and resource at the emulator (GET pod, GET node, PATCH
 * node for the lock, the 2 LISTs of the node's pods, PATCH pod for the allocation, GET node for the
 * lock's confirmation, POST of the Binding), plus each stack's one DRA discovery GET.
 */
class BindCostOnBothClientsTest {

  private static final RetryPolicy FAST =
      RetryPolicy.builder()
          .pollInterval(Duration.ofMillis(5))
          .retryTimeout(Duration.ofSeconds(5))
          .build();

  @Test
  void anUncontendedBindCostsTheSameEightRequestsOnBothClients() throws Exception {
    assertThat(bindOnBothClients(VendorRegistry.discover(), Map.of()))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "get pods", 1L,
                "get nodes", 2L,
                "patch nodes", 1L,
                "list pods", 2L,
                "patch pods", 1L,
                "create pods/binding", 1L,
                // the stack's one DRA discovery (issue 28): the emulator 404s it, believed for a
                // minute
                "get /apis/resource.k8s.io/v1", 1L));
  }

  /**
   * Issue 25 item 2: with the stack's watched pods ({@code HamiStack.Builder.watchedPods}, each
   * client's transport), the bind of a filtered pod (its allocation written first, the node's pods
   * read at that write's version) sends what it sends without them but the two pod LISTs, which the
   * pod watch answers (hedge and wait 10 s here, so that only a watch that never got there would
   * list).
   */
  @Test
  void withWatchedPodsTheBindSendsNoPodListOnBothClients() throws Exception {
    Duration tenSeconds = Duration.ofSeconds(10);
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Map<Boolean, Map<String, Long>> clientJava = new TreeMap<>();
      for (boolean watched : List.of(false, true)) {
        try (KubernetesHamiStack hami =
            KubernetesHamiStack.builder(k8s.newApiClient(tenSeconds))
                .stack(
                    s -> {
                      if (watched) {
                        s.watchedPods(
                            KubeWatchTransport.create(k8s.apiClient(), tenSeconds),
                            tenSeconds,
                            tenSeconds);
                      }
                    })
                .retryPolicy(FAST)
                .watch(false)
                .build()) {
          clientJava.put(watched, filteredBind(k8s, hami, "cj-" + watched));
        }
        assertNoWatchThread();
      }
      Map<Boolean, Map<String, Long>> fabric8 = new TreeMap<>();
      for (boolean watched : List.of(false, true)) {
        try (KubernetesClient client = Fabric8Replicas.client(k8s)) {
          HamiStack.Builder b =
              Fabric8HamiStack.builder(client)
                  .retryPolicy(FAST)
                  .backend(Fabric8LockStack.backend(client, Optional.empty()));
          if (watched) {
            b.watchedPods(Fabric8WatchTransport.create(client), tenSeconds, tenSeconds);
          }
          try (HamiStack hami = b.build()) {
            fabric8.put(watched, filteredBind(k8s, hami, "f8-" + watched));
          }
        }
        assertNoWatchThread();
      }
      assertThat(fabric8).isEqualTo(clientJava);
      Map<String, Long> lists = new TreeMap<>(clientJava.get(false));
      assertThat(lists.remove("list pods")).as("pod LISTs without the watch").isEqualTo(2L);
      assertThat(clientJava.get(true)).as("with the watch").isEqualTo(lists);
    }
  }

  /**
   * The stack's close() stopped its pod watch: no watch thread of {@code ListAndWatch.of} lives.
   */
  private static void assertNoWatchThread() {
    assertThat(Thread.getAllStackTraces().keySet())
        .as("threads after the stack's close()")
        .noneMatch(t -> t.getName().startsWith("hami-lock-watch-") && t.isAlive());
  }

  /**
   * Filters a fresh pod onto a fresh node with {@code hami}'s Filter, then binds it once the stack
   * is ready; answers the bind's requests, by verb and resource.
   */
  private static Map<String, Long> filteredBind(ApiServerEmulator k8s, HamiStack hami, String run)
      throws Exception {
    assertThat(hami.awaitReady(Duration.ofSeconds(10))).as("%s: ready", run).isTrue();
    String node = run + "-node";
    EmulatorObjects.createNode(
        k8s, PodBinderOverHttpTest.gpuNode(node, "GPU-" + run + "-0fc3eda5-e98b-a25b"));
    PodView pod =
        EmulatorObjects.pod(
                EmulatorObjects.createPod(
                    k8s, PodBinderOverHttpTest.guidePod(run + "-p", Map.of(), Map.of())))
            .view();
    assertThat(hami.extenderFilter().filter(pod, List.of(node)).node()).contains(node);
    if (hami.watchedPods().isPresent()) {
      // awaitReady waits for the first listing; the stream is opened after it: counted before the
      // reset, or it would land among the bind's requests on one client and not the other
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (k8s.requestCounts().entrySet().stream()
          .noneMatch(e -> e.getKey().toString().equals("watch pods") && e.getValue() > 0)) {
        assertThat(System.nanoTime()).as("%s: the pod watch opened", run).isLessThan(deadline);
        Thread.sleep(5);
      }
    }
    k8s.resetCounters();
    BindResult r = hami.podBinder().bind(PodBinderOverHttpTest.NS, pod.name(), pod.uid(), node);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    hami.watchedPods()
        .ifPresent(w -> assertThat(w.answered()).as("%s: lists the watch answered", run).isOne());
    Map<String, Long> counts = new TreeMap<>();
    k8s.requestCounts().forEach((k, v) -> counts.put(k.toString(), v));
    return counts;
  }

  /**
   * Issue 23: a pod whose vendors name two lock keys takes both (one PATCH each) and confirms both
   * with one GET of the node before its Binding ({@code StoreNodeLock.firstLost}), not one GET per
   * key: the same 2 node GETs as a one-key bind, on both clients.
   */
  @Test
  void aBindHoldingTwoLockKeysConfirmsThemWithOneReadOfTheNode() throws Exception {
    VendorRegistry twoKeys =
        VendorRegistry.builder().discover().register(new SecondLockVendor()).build();
    Map<String, Long> counts =
        bindOnBothClients(twoKeys, Map.of(SecondLockVendor.COUNT, BigDecimal.ONE));
    assertThat(counts).containsEntry("patch nodes", 2L).containsEntry("create pods/binding", 1L);
    assertThat(counts)
        .as("one GET for the pod's node view, one for both locks")
        .containsEntry("get nodes", 2L);
  }

  /** Binds a fresh pod with {@code extra} limits on each client; asserts both sent the same. */
  private static Map<String, Long> bindOnBothClients(
      VendorRegistry registry, Map<String, BigDecimal> extra) throws Exception {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      Map<String, Long> clientJava;
      try (KubernetesHamiStack hami =
          KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
              .stack(s -> s.registry(registry))
              .retryPolicy(FAST)
              .watch(false)
              .build()) {
        clientJava = bindOnce(k8s, hami, "cj", extra);
      }
      Map<String, Long> fabric8;
      try (KubernetesClient client = Fabric8Replicas.client(k8s);
          var hami =
              Fabric8HamiStack.builder(client)
                  .registry(registry)
                  .retryPolicy(FAST)
                  .backend(Fabric8LockStack.backend(client, Optional.empty()))
                  .build()) {
        fabric8 = bindOnce(k8s, hami, "f8", extra);
      }
      assertThat(fabric8).isEqualTo(clientJava);
      return clientJava;
    }
  }

  /**
   * Binds a fresh pod on a fresh node; answers the requests the bind sent, by verb and resource.
   */
  private static Map<String, Long> bindOnce(
      ApiServerEmulator k8s, HamiFlows hami, String run, Map<String, BigDecimal> extra)
      throws Exception {
    String node = run + "-gpu-node";
    EmulatorObjects.createNode(
        k8s, PodBinderOverHttpTest.gpuNode(node, "GPU-" + run + "-0fc3eda5-e98b-a25b"));
    String uid =
        EmulatorObjects.pod(EmulatorObjects.createPod(k8s, withLimits(run + "-p", extra)))
            .view()
            .uid();
    k8s.resetCounters();
    BindResult r = hami.podBinder().bind(PodBinderOverHttpTest.NS, run + "-p", uid, node);
    assertThat(r.outcome()).as(r.reason()).isEqualTo(BindOutcome.BOUND);
    Map<String, Long> counts = new TreeMap<>();
    k8s.requestCounts().forEach((k, v) -> counts.put(k.toString(), v));
    return counts;
  }

  /** The guide's gang member with {@code extra} limits on its container. */
  private static PodView withLimits(String name, Map<String, BigDecimal> extra) {
    PodView p = PodBinderOverHttpTest.guidePod(name, Map.of(), Map.of());
    ContainerView c = p.containers().get(0);
    Map<String, BigDecimal> limits = new TreeMap<>(c.limits());
    limits.putAll(extra);
    return PodView.builder(p.namespace(), name)
        .labels(p.labels())
        .containers(List.of(new ContainerView(c.name(), c.image(), limits, c.requests())))
        .build();
  }

  /**
   * A second vendor that owns no device and asks its own node lock for every pod with a positive
   * {@value #COUNT} (HAMi's {@code LockNode} predicate, {@code DeviceVendor.needsLock}).
   */
  static final class SecondLockVendor implements DeviceVendor {
    static final String COUNT = "example.com/second";

    @Override
    public String commonWord() {
      return "SECOND";
    }

    @Override
    public VendorConfig defaultConfig() {
      return VendorConfig.of(COUNT, null);
    }

    @Override
    public Optional<String> nodeLockKey() {
      return Optional.of("example.com/second.lock");
    }

    @Override
    public String registrationAnnotationKey() {
      return "example.com/node-second-register";
    }

    @Override
    public String toAllocateAnnotationKey() {
      return "example.com/second-devices-to-allocate";
    }

    @Override
    public String allocatedAnnotationKey() {
      return "example.com/second-devices-allocated";
    }

    @Override
    public Optional<ContainerDeviceRequest> parseRequest(ContainerView c, VendorConfig config) {
      return Optional.empty();
    }

    @Override
    public List<DeviceInfo> decodeNodeDevices(NodeView node) {
      return List.of();
    }

    @Override
    public ContainerFit fit(List<DeviceUsage> devices, ContainerDeviceRequest r, FitContext c) {
      return ContainerFit.failure("owns no device");
    }
  }
}
