package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.Waiter;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.fabric8.Fabric8LockStore;
import dev.hamilock.fabric8.Fabric8NodeLockWatch;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.k8s.watch.NodeLockWatch;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.junit.BackendTest;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue 25 item 2 on the wire: the node watch offers the node's {@code resourceVersion} while the
 * lock is free ({@code ReleaseFeeder#observedFreeVersion}), and a create conditioned on it ({@code
 * [test /metadata/resourceVersion, test P null, add P V]}) is written at that version only: after
 * any other write to the node (another holder's lock and release, or an unrelated annotation) the
 * API server refuses it and nothing is written. client-java's store beside fabric8's watch and
 * fabric8's store beside client-java's watch, on the emulator and on kube-apiserver.
 */
class VersionedCreateOnBackendsTest {

  @BackendTest
  void aCreateAtTheWatchedFreeVersionIsWrittenOnlyWhileTheNodeIsStillAtIt(KubeBackend k8s)
      throws Exception {
    Cluster cluster = new Cluster(k8s);
    try (KubernetesLockStack cj = Fabric8Replicas.clientJavaLocks(k8s);
        KubernetesClient client = Fabric8Replicas.client(k8s);
        Fabric8NodeLockWatch f8watch = Fabric8NodeLockWatch.create(client);
        NodeLockWatch cjWatch =
            NodeLockWatch.builder(k8s.newApiClient(Duration.ofSeconds(5))).build()) {
      for (ReleaseFeeder w : List.<ReleaseFeeder>of(f8watch, cjWatch)) {
        w.releaseSignal(Cluster.KEY);
        w.start();
        assertThat(w.awaitSynced(Duration.ofSeconds(30))).isTrue();
      }
      LockStore cjStore = cj.nodeLock().store();
      LockStore f8Store = Fabric8LockStore.builder(client).build();
      check(k8s, cluster, cjStore, f8watch, "cj store, f8 watch");
      check(k8s, cluster, f8Store, cjWatch, "f8 store, cj watch");
    }
  }

  @BackendTest
  void aWaiterWokenByAReleaseSeesTheVersionItWasReleasedAt(KubeBackend k8s) throws Exception {
    Cluster cluster = new Cluster(k8s);
    try (KubernetesClient client = Fabric8Replicas.client(k8s);
        Fabric8NodeLockWatch f8watch = Fabric8NodeLockWatch.create(client);
        NodeLockWatch cjWatch =
            NodeLockWatch.builder(k8s.newApiClient(Duration.ofSeconds(5))).build()) {
      for (ReleaseFeeder w : List.<ReleaseFeeder>of(f8watch, cjWatch)) {
        FairReleaseQueue queue = w.releaseSignal(Cluster.KEY);
        w.start();
        assertThat(w.awaitSynced(Duration.ofSeconds(30))).isTrue();
        String node = cluster.node(Cluster.unique("woken"));
        cluster.setLock(node, "2026-12-03T00:00:00Z,ns,holder");
        assertThat(
                Fabric8Replicas.awaitTrue(() -> w.observedLockValue(node, Cluster.KEY).isPresent()))
            .isTrue();
        try (Waiter waiter = queue.join(node)) {
          AtomicReference<Optional<String>> seen = new AtomicReference<>();
          // completed on the watch's thread by the release: what the woken attempt would ask
          CompletableFuture<Boolean> woken = waiter.awaitAsync(Duration.ofSeconds(30));
          CompletableFuture<Void> asked =
              woken.thenRun(() -> seen.set(w.observedFreeVersion(node, Cluster.KEY)));
          cluster.setLock(node, null);
          assertThat(woken.get(30, TimeUnit.SECONDS)).isTrue();
          asked.get(30, TimeUnit.SECONDS); // woken.get() may return before the action has run
          assertThat(seen.get()).as("%s", w).contains(version(k8s, node));
        }
      }
    }
  }

  private static void check(
      KubeBackend k8s, Cluster cluster, LockStore store, ReleaseFeeder watch, String run)
      throws Exception {
    // created after the watch listed: its ADDED event carries the version (a listing does not)
    String node = cluster.node(Cluster.unique("at"));
    Optional<String> free = awaitFree(watch, node, Optional.empty());
    assertThat(free).as("%s: the version of a free node", run).contains(version(k8s, node));

    CasResult written =
        store.createIfAbsentAt(node, Cluster.KEY, "2026-12-03T00:00:00Z,ns,a", free.get());
    assertThat(written.isWritten()).as("%s: at the current version", run).isTrue();
    assertThat(cluster.lock(node)).contains("2026-12-03T00:00:00Z,ns,a");
    assertThat(
            Fabric8Replicas.awaitTrue(() -> watch.observedLockValue(node, Cluster.KEY).isPresent()))
        .isTrue();
    assertThat(watch.observedFreeVersion(node, Cluster.KEY)).as("%s: held", run).isEmpty();
    cluster.setLock(node, null);
    Optional<String> again = awaitFree(watch, node, free);
    assertThat(again).as("%s: free again, later", run).isPresent().isNotEqualTo(free);

    // another holder came and went since `again`: the node moved on
    cluster.setLock(node, "2026-12-03T00:00:01Z,ns,b");
    cluster.setLock(node, null);
    assertThat(store.createIfAbsentAt(node, Cluster.KEY, "2026-12-03T00:00:02Z,ns,a", again.get()))
        .as("%s: an ABA since the version", run)
        .isEqualTo(CasResult.notWritten(Optional.empty()));
    assertThat(cluster.lock(node)).as("%s: nothing written", run).isEmpty();

    // an unrelated write moves the version too: refused, and a plain create then succeeds
    Optional<String> later = awaitFree(watch, node, again);
    k8s.mutate(
        "nodes",
        null,
        node,
        o -> {
          ((com.fasterxml.jackson.databind.node.ObjectNode) o.get("metadata").get("annotations"))
              .put("example.com/unrelated", "x");
          return o;
        });
    assertThat(store.createIfAbsentAt(node, Cluster.KEY, "2026-12-03T00:00:03Z,ns,a", later.get()))
        .as("%s: an unrelated write since the version", run)
        .isEqualTo(CasResult.notWritten(Optional.empty()));
    assertThat(store.createIfAbsent(node, Cluster.KEY, "2026-12-03T00:00:04Z,ns,a").isWritten())
        .isTrue();
  }

  /** The watch's free version of {@code node} once it differs from {@code not}. */
  private static Optional<String> awaitFree(ReleaseFeeder watch, String node, Optional<String> not)
      throws InterruptedException {
    Fabric8Replicas.awaitTrue(
        () -> {
          Optional<String> v = watch.observedFreeVersion(node, Cluster.KEY);
          return v.isPresent() && !v.equals(not);
        });
    return watch.observedFreeVersion(node, Cluster.KEY);
  }

  private static String version(KubeBackend k8s, String node) {
    return k8s.get("nodes", null, node)
        .orElseThrow()
        .path("metadata")
        .path("resourceVersion")
        .asText();
  }
}
