package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.fabric8.Fabric8LockStack;
import dev.hamilock.fabric8.Fabric8LockStore;
import dev.hamilock.fabric8.Fabric8NodeLockWatch;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * hami-lock-fabric8's facade on the same backends as client-java's: {@link Fabric8LockStack} takes
 * core's settings and runs on its own watch (a client-java release wakes it), and its {@link
 * Fabric8LockStack#backend} plugs into client-java's {@link KubernetesLockStack} through the
 * backend seam, so a client-java stack locks through fabric8.
 */
class Fabric8LockStackTest {

  @BackendTest
  void theFabric8StackSeesAClientJavaHolderAndItsReleaseThroughItsOwnWatch(KubeBackend k8s)
      throws Exception {
    Cluster cluster = new Cluster(k8s);
    cluster.namespace("ns");
    cluster.pod("ns", "cj", "Running");
    cluster.pod("ns", "f8", "Running");
    String node = cluster.node(Cluster.unique("f8stack"));
    try (KubernetesLockStack cj = Fabric8Replicas.clientJavaLocks(k8s);
        KubernetesClient client = Fabric8Replicas.client(k8s);
        Fabric8LockStack f8 = Fabric8LockStack.builder(client).environment(Map.of()).build()) {
      ReleaseFeeder watch = f8.watch().orElseThrow();
      assertThat(watch).isInstanceOf(Fabric8NodeLockWatch.class);
      assertThat(watch.awaitSynced(Duration.ofSeconds(30))).isTrue();
      assertThat(f8.settings().lockTimeout()).isEqualTo(Duration.ofMinutes(5));
      LockOwner cjOwner = LockOwner.of("ns", "cj");
      assertThat(cj.nodeLock().acquire(node, cjOwner)).isEqualTo(AcquireOutcome.ACQUIRED);
      LockOwner f8Owner = LockOwner.of("ns", "f8");
      assertThatThrownBy(() -> f8.nodeLock().acquire(node, f8Owner))
          .isInstanceOf(LockContentionException.class);

      long before = watch.releaseCount();
      assertThat(cj.nodeLock().release(node, cjOwner)).isTrue();
      assertThat(Fabric8Replicas.awaitTrue(() -> watch.releaseCount() > before)).isTrue();
      assertThat(f8.nodeLock().acquire(node, f8Owner)).isEqualTo(AcquireOutcome.ACQUIRED);
      assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,f8"));
      assertThat(f8.nodeLock().release(node, f8Owner)).isTrue();
    }
  }

  @BackendTest
  void aClientJavaStackLocksThroughTheFabric8Backend(KubeBackend k8s) throws Exception {
    Cluster cluster = new Cluster(k8s);
    cluster.namespace("ns");
    cluster.pod("ns", "p", "Running");
    String node = cluster.node(Cluster.unique("f8backend"));
    try (KubernetesClient client = Fabric8Replicas.client(k8s);
        KubernetesLockStack locks =
            KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
                .backend(Fabric8LockStack.backend(client, Optional.empty()))
                .environment(Map.of())
                .build()) {
      assertThat(locks.store().toString()).startsWith("Fabric8LockStore[");
      assertThat(locks.nodeLock().acquire(node, LockOwner.of("ns", "p")))
          .isEqualTo(AcquireOutcome.ACQUIRED);
      assertThat(cluster.lock(node)).hasValueSatisfying(v -> assertThat(v).endsWith(",ns,p"));
      assertThat(Fabric8LockStore.builder(client).build().read(node, Cluster.KEY))
          .isEqualTo(cluster.lock(node));
    }
  }
}
