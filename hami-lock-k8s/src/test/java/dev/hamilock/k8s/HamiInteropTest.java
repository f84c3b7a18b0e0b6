package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.LockAcquisition;
import dev.hamilock.reference.HamiDevicePlugin;
import dev.hamilock.reference.HamiLockContentionException;
import dev.hamilock.reference.HamiNodeLock;
import dev.hamilock.testkit.ApiServerEmulator;
import io.kubernetes.client.openapi.models.V1Pod;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Interoperability with HAMi's Go components, played by hami-reference's faithful Java
 * re-implementations (spec §1.5–1.6, §3.1), each with its own ApiClient on the same emulator.
 */
class HamiInteropTest {

  static ApiServerEmulator k8s;
  static Cluster cluster;
  static ExecutorService pool;
  HamiNodeLock hami;
  KubernetesLockStack ours;
  TestClock clock;
  String node;

  @BeforeAll
  static void start() {
    k8s = ApiServerEmulator.start();
    cluster = new Cluster(k8s);
    pool = Executors.newCachedThreadPool();
  }

  @AfterAll
  static void stop() {
    pool.shutdownNow();
    k8s.close();
  }

  @BeforeEach
  void setUp() {
    clock = new TestClock(Instant.now());
    hami =
        HamiNodeLock.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .clock(Clock.fixed(clock.instant(), ZoneOffset.UTC))
            .build();
    ours =
        KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
            .clock(clock)
            .environment(Map.of())
            .retryPolicy(RetryPolicy.builder().retryTimeout(Duration.ofSeconds(5)).build())
            .build();
    node = cluster.node(Cluster.unique("interop"));
    cluster.pod("ns", "pod-a", "Pending");
    cluster.pod("ns", "pod-h", "Pending");
  }

  @AfterEach
  void tearDown() {
    ours.close();
  }

  @Test
  void hamisReleaseRemovesALockWeTook() throws Exception {
    ours.nodeLock().acquire(node, LockOwner.of("ns", "pod-a"));
    hami.releaseNodeLock(node, "ns", "pod-a", false);
    assertThat(cluster.lock(node)).isEmpty();
  }

  @Test
  void ourReleaseRemovesALockHamiTookForTheSamePod() throws Exception {
    hami.lockNode(node, "ns", "pod-h");
    assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,pod-h"));
    assertThat(ours.nodeLock().release(node, LockOwner.of("ns", "pod-h"))).isTrue();
    assertThat(cluster.lock(node)).isEmpty();
  }

  @Test
  void hamiContendsWithOurLock() throws Exception {
    ours.nodeLock().acquire(node, LockOwner.of("ns", "pod-a"));
    assertThatThrownBy(() -> hami.lockNode(node, "ns", "pod-h"))
        .satisfies(e -> assertThat(HamiLockContentionException.isContention(e)).isTrue());
    assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,pod-a"));
  }

  @Test
  void weContendWithHamisMergePatchLockAndTakeItAfterHamiReleases() throws Exception {
    hami.lockNode(node, "ns", "pod-h");
    String hamiValue = cluster.lock(node).orElseThrow();
    assertThatThrownBy(() -> ours.nodeLock().acquire(node, LockOwner.of("ns", "pod-a")))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> {
              assertThat(e.holderValue()).contains(hamiValue);
              assertThat(e.holder().flatMap(r -> r.owner())).contains(LockOwner.of("ns", "pod-h"));
            });
    assertThat(ours.watch().orElseThrow().awaitSynced(Duration.ofSeconds(5))).isTrue();
    CompletableFuture<LockAcquisition> waiting =
        ours.acquirer()
            .acquireAsync(node, LockOwner.of("ns", "pod-a"), true, List.of(ours.nodeLock()), pool);
    WatchAndCostTest.awaitWaiting(WatchAndCostTest.queue(ours), node, 1); // contended, now waiting
    assertThat(waiting).isNotDone();
    hami.releaseNodeLock(node, "ns", "pod-h", false);
    LockAcquisition a = waiting.get(5, TimeUnit.SECONDS);
    assertThat(a.attempts()).isGreaterThanOrEqualTo(2);
    assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,pod-a"));
  }

  @Test
  void hamiLegacyValueContendsUntilOneLockTimeoutThenIsTakenOver() throws Exception {
    String legacy =
        clock.instant().minusSeconds(10).atOffset(ZoneOffset.ofHours(8)).withNano(0).toString();
    cluster.setLock(node, legacy); // what HAMi <= v2.3 wrote: timestamp only, +08:00 zone
    assertThatThrownBy(() -> ours.nodeLock().acquire(node, LockOwner.of("ns", "pod-a")))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> assertThat(e.getMessage()).contains(legacy).contains("unknown owner"));
    // HAMi's own release would delete it for any pod (spec §7 item 3); ours never does
    assertThat(ours.nodeLock().release(node, LockOwner.of("ns", "pod-a"))).isFalse();
    clock.advance(
        Duration.ofMinutes(5).plusSeconds(1)); // one timeout after this process first saw it
    assertThat(ours.nodeLock().acquire(node, LockOwner.of("ns", "pod-a")))
        .isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
  }

  @Test
  void malformedValueBlocksHamiForeverButUsOnlyOneLockTimeout() throws Exception {
    cluster.setLock(node, "junk,foo,ns,name");
    assertThatThrownBy(() -> hami.lockNode(node, "ns", "pod-h"))
        .satisfies(e -> assertThat(HamiLockContentionException.isContention(e)).isFalse());
    assertThatThrownBy(() -> ours.nodeLock().acquire(node, LockOwner.of("ns", "pod-a")))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> assertThat(e.holderValue()).contains("junk,foo,ns,name"));
    clock.advance(Duration.ofMinutes(5).plusSeconds(1));
    assertThat(ours.nodeLock().acquire(node, LockOwner.of("ns", "pod-a")))
        .isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
    // and HAMi's release for the new owner removes the value we wrote
    hami.releaseNodeLock(node, "ns", "pod-a", false);
    assertThat(cluster.lock(node)).isEmpty();
  }

  @Test
  void hamisDevicePluginFindsOurLocksOwner() throws Exception {
    ours.nodeLock().acquire(node, LockOwner.of("ns", "pod-a"));
    HamiDevicePlugin plugin = new HamiDevicePlugin(k8s.newApiClient(Duration.ofSeconds(5)), hami);
    V1Pod pod = plugin.getPendingPod(node);
    assertThat(pod.getMetadata().getNamespace()).isEqualTo("ns");
    assertThat(pod.getMetadata().getName()).isEqualTo("pod-a");
  }
}
