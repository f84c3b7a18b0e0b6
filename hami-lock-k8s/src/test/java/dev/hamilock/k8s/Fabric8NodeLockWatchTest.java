package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.fabric8.Fabric8LockStore;
import dev.hamilock.fabric8.Fabric8NodeLockWatch;
import dev.hamilock.fabric8.Fabric8OwnerLiveness;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * hami-lock-fabric8's release watch on the same backends as client-java's: a lock released by a
 * client-java replica is signalled to the fabric8 watch's queue (core's release detection over a
 * fabric8 stream), the watched value serves the store's contended-create witness (1 request, no
 * GET), and a key added to a running watch relists once.
 */
class Fabric8NodeLockWatchTest {

  @BackendTest
  void aClientJavaReleaseReachesTheFabric8WatchAndItsWitnessSavesTheGet(KubeBackend k8s)
      throws Exception {
    Cluster cluster = new Cluster(k8s);
    cluster.namespace("ns");
    cluster.pod("ns", "cj", "Running");
    String node = cluster.node(Cluster.unique("f8watch"));
    try (KubernetesLockStack cj = Fabric8Replicas.clientJavaLocks(k8s);
        KubernetesClient client = Fabric8Replicas.client(k8s);
        Fabric8NodeLockWatch watch = Fabric8NodeLockWatch.create(client)) {
      FairReleaseQueue queue = watch.releaseSignal(Cluster.KEY);
      watch.start();
      assertThat(watch.awaitSynced(Duration.ofSeconds(30))).isTrue();
      NodeLock f8 =
          StoreNodeLock.create(
              Fabric8LockStore.builder(client)
                  .releaseSignal(queue)
                  .watchedLockValues(Cluster.KEY, n -> watch.observedLockValue(n, Cluster.KEY))
                  .build(),
              LockSettings.builder()
                  .environment(Map.of())
                  .ownerLiveness(Fabric8OwnerLiveness.create(client))
                  .clock(Clock.systemUTC())
                  .build());
      LockOwner cjOwner = LockOwner.of("ns", "cj");
      assertThat(cj.nodeLock().acquire(node, cjOwner)).isEqualTo(AcquireOutcome.ACQUIRED);
      String held = cluster.lock(node).orElseThrow();
      assertThat(
              Fabric8Replicas.awaitTrue(
                  () -> watch.observedLockValue(node, Cluster.KEY).isPresent()))
          .isTrue();
      assertThat(watch.observedLockValue(node, Cluster.KEY)).contains(held);
      assertThat(queue.isReliable(node)).isTrue();

      k8s.resetCounters();
      assertThat(
              Fabric8LockStore.builder(client)
                  .watchedLockValues(Cluster.KEY, n -> watch.observedLockValue(n, Cluster.KEY))
                  .build()
                  .createIfAbsent(node, Cluster.KEY, "other"))
          .isEqualTo(CasResult.notWritten(Optional.of(held)));
      assertThat(k8s.requestCount("patch", "nodes")).isEqualTo(1);
      assertThat(k8s.requestCount("get", "nodes")).isZero();

      long before = watch.releaseCount();
      assertThat(cj.nodeLock().release(node, cjOwner)).isTrue();
      assertThat(Fabric8Replicas.awaitTrue(() -> watch.releaseCount() > before)).isTrue();
      assertThat(watch.observedLockValue(node, Cluster.KEY)).isEmpty();
      assertThat(f8.acquire(node, LockOwner.of("ns", "f8"))).isEqualTo(AcquireOutcome.ACQUIRED);

      long relists = watch.relistCount();
      watch.releaseSignal("example.com/other-lock");
      assertThat(
              Fabric8Replicas.awaitTrue(() -> watch.relistCount() > relists && watch.isConnected()))
          .isTrue();
      assertThat(watch.keys()).containsExactly("example.com/other-lock", Cluster.KEY);
    }
  }
}
