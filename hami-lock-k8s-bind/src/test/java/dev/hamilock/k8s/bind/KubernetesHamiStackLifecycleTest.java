package dev.hamilock.k8s.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.DevicePluginHandoff;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.FlowFailure;
import dev.hamilock.bind.HamiStack;
import dev.hamilock.bind.HandoffResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.LockStackSettings;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link KubernetesHamiStack}'s lifecycle (issue 16 item 6) and its one settings value (issue 17
 * item 3): after {@code close()} no flow does new work (bind never BOUND, filter and hand-off
 * refuse with a typed failure), the watch threads it started are gone; every lock-stack setting
 * (listener, owner liveness, liveness TTL, environment) reaches the lock through the whole stack.
 */
class KubernetesHamiStackLifecycleTest {
  static final String NS = PodBinderOverHttpTest.NS;
  static final String NODE = "gpu-node-1";

  private ApiServerEmulator k8s;

  @BeforeEach
  void start() {
    k8s = ApiServerEmulator.start();
  }

  @AfterEach
  void stop() {
    k8s.close();
  }

  private static Set<Thread> watchThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("hami-lock-node-watch") && t.isAlive())
        .collect(Collectors.toSet());
  }

  @Test
  void afterCloseBindIsFailedNeverBoundAndWritesNothing() throws Exception {
    EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(NODE, "GPU-a"));
    String uid =
        EmulatorObjects.pod(
                EmulatorObjects.createPod(
                    k8s, PodBinderOverHttpTest.guidePod("p1", Map.of(), Map.of())))
            .view()
            .uid();
    KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).build();
    hami.close();
    assertThat(hami.isClosed()).isTrue();
    long requests =
        k8s.totalRequests(); // the watch thread is joined: nothing else calls the server

    BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);

    assertThat(r.outcome()).isEqualTo(BindOutcome.FAILED);
    assertThat(r.reason()).contains("closed");
    assertThat(k8s.totalRequests())
        .as("no read, no write, no lock request after close")
        .isEqualTo(requests);
    assertThat(EmulatorObjects.lock(k8s, NODE)).isNull();
    assertThat(k8s.get("pods", NS, "p1").orElseThrow().at("/spec/nodeName").asText()).isEmpty();
    assertThat(hami.toString()).contains("closed");
  }

  @Test
  void afterCloseTheFilterFailsRejectedAndTheHandoffIsAnErrorResult() throws Exception {
    EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(NODE, "GPU-a"));
    EmulatorObjects.createPod(k8s, PodBinderOverHttpTest.guidePod("p1", Map.of(), Map.of()));
    PodView pod = EmulatorObjects.readPod(k8s, NS, "p1");
    KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).watch(false).build();
    DevicePluginHandoff before = hami.devicePluginHandoff("NVIDIA");
    hami.close();

    // the one error model (#16 item 5): the filter returns a failed decision, it does not throw
    FilterDecision d = hami.extenderFilter().filter(pod, List.of(NODE));
    assertThat(d.node()).isEmpty();
    assertThat(d.failure())
        .hasValueSatisfying(
            f -> {
              assertThat(f.kind()).isEqualTo(FlowFailure.Kind.REJECTED);
              assertThat(f.message()).contains("closed");
              assertThat(f.cause()).containsInstanceOf(ClusterException.class);
            });
    assertThat(EmulatorObjects.annotations(k8s, NS, "p1")).doesNotContainKey("hami.io/vgpu-node");
    for (DevicePluginHandoff h : List.of(before, hami.devicePluginHandoff("NVIDIA"))) {
      HandoffResult r = h.allocateAll(NODE);
      assertThat(r.status()).isEqualTo(HandoffResult.Status.ERROR);
      assertThat(r.lockReleased()).isFalse();
    }
  }

  @Test
  void closeStopsTheWatchThreadsItStartedAndReadinessEnds() throws Exception {
    Set<Thread> before = watchThreads();
    KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10))).build();
    assertThat(hami.awaitReady(Duration.ofSeconds(10))).isTrue();
    Set<Thread> started = watchThreads();
    started.removeAll(before);
    assertThat(started).as("one watch thread per lock key").hasSize(hami.lockKeys().size());
    assertThat(hami.lockWatchStates())
        .extracting(HamiStack.LockWatchState::key)
        .containsExactlyElementsOf(hami.lockKeys());

    hami.close();

    assertThat(started).noneMatch(Thread::isAlive);
    assertThat(hami.awaitReady(Duration.ofSeconds(1))).isFalse();
    hami.close(); // idempotent
  }

  @Test
  void withTheWatchOffNoThreadIsStarted() throws Exception {
    Set<Thread> before = watchThreads();
    try (KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
            .watch(false)
            .build()) {
      Set<Thread> started = watchThreads();
      started.removeAll(before);
      assertThat(started).isEmpty();
      assertThat(hami.awaitReady(Duration.ZERO)).isTrue();
      assertThat(hami.lockWatchStates()).isEmpty();
    }
  }

  @Test
  void everyLockStackSettingIsSettableOnTheWholeStackAndReachesTheLock() throws Exception {
    // a lock held by a pod that does not exist: dangling, taken over at once by the default
    // liveness
    EmulatorObjects.createNode(k8s, PodBinderOverHttpTest.gpuNode(NODE, "GPU-a"));
    String uid =
        EmulatorObjects.pod(
                EmulatorObjects.createPod(
                    k8s, PodBinderOverHttpTest.guidePod("p1", Map.of(), Map.of())))
            .view()
            .uid();
    try (KubernetesLockStack other =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(10)))
            .watch(false)
            .ownerLiveness(OwnerLiveness.assumeAlive())
            .build()) {
      other.nodeLock().acquire(NODE, LockOwner.of(NS, "gone"));
    }
    List<String> events = new CopyOnWriteArrayList<>();
    NodeLockListener listener =
        new NodeLockListener() {
          @Override
          public void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {
            events.add("acquired " + owner.name());
          }

          @Override
          public void contended(dev.hamilock.core.LockContentionException c) {
            events.add("contended");
          }

          @Override
          public void waited(
              String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
            events.add("waited " + owner.name() + " " + acquired);
          }
        };
    LockStackSettings settings =
        LockStackSettings.builder()
            .environment(Map.of("HAMI_NODELOCK_EXPIRE", "90s"))
            .listener(listener)
            .ownerLiveness(OwnerLiveness.assumeAlive())
            .livenessCacheTtl(Duration.ZERO)
            .retryPolicy(
                RetryPolicy.builder()
                    .retryTimeout(Duration.ZERO)
                    .build()) // no waiting: one attempt
            .watch(false)
            .build();
    assertThat(settings.lock().lockTimeout())
        .as("HAMI_NODELOCK_EXPIRE from the given environment")
        .isEqualTo(Duration.ofSeconds(90));
    assertThat(
            LockStackSettings.builder()
                .settings(settings)
                .lockTimeout(Duration.ofMinutes(2))
                .build()
                .lock()
                .lockTimeout())
        .as("explicit beats the environment")
        .isEqualTo(Duration.ofMinutes(2));

    try (KubernetesHamiStack hami =
        KubernetesHamiStack.builder(k8s.newApiClient(Duration.ofSeconds(10)), settings).build()) {
      assertThat(hami.settings().lock().lockTimeout()).isEqualTo(Duration.ofSeconds(90));
      assertThat(hami.settings().lock().listener()).isSameAs(listener);
      // assumeAlive: the dangling holder is not taken over; with no retry the bind is contended
      BindResult r = hami.podBinder().bind(NS, "p1", uid, NODE);
      assertThat(r.outcome()).isEqualTo(BindOutcome.CONTENDED);
      assertThat(events)
          .as("the lock's and the one acquire loop's events reach the settings' listener")
          .containsExactly("contended", "waited p1 false");
    }
    try (KubernetesHamiStack hami =
        KubernetesHamiStack.builder(
                k8s.newApiClient(Duration.ofSeconds(10)),
                LockStackSettings.builder().settings(settings).ownerLiveness(null).build())
            .build()) {
      events.clear();
      // the default (pod) liveness: the holder pod is gone, its lock is taken over and the pod
      // binds
      assertThat(hami.podBinder().bind(NS, "p1", uid, NODE).outcome()).isEqualTo(BindOutcome.BOUND);
      assertThat(events).contains("waited p1 true");
    }
  }

  @Test
  void theSettingsValidateAndNameTheSetting() {
    assertThatThrownBy(() -> LockStackSettings.builder().key(" ").build())
        .hasMessageContaining("key");
    assertThatThrownBy(() -> LockStackSettings.builder().maxAttempts(101).build())
        .hasMessageContaining("maxAttempts");
    assertThatThrownBy(
            () -> LockStackSettings.builder().livenessCacheTtl(Duration.ofSeconds(-1)).build())
        .hasMessageContaining("livenessCacheTtl");
    assertThatThrownBy(() -> LockStackSettings.builder().listener(null).build())
        .hasMessageContaining("listener");
    assertThatThrownBy(
            () ->
                LockStackSettings.builder()
                    .environment(Map.of("HAMI_NODELOCK_EXPIRE", "soon"))
                    .build())
        .hasMessageContaining("soon");
    assertThatThrownBy(
            () -> LockStackSettings.builder().requestTimeout(Duration.ofSeconds(30)).build())
        .hasMessageContaining("requestTimeout")
        .hasMessageContaining("PT30S");
    assertThatThrownBy(() -> LockStackSettings.defaults().withKey("")).hasMessageContaining("key");
  }
}
