package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.LOCK_KEY;
import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.gpu;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static dev.hamilock.bind.Fixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.testing.logs.LogCapture;
import org.junit.jupiter.api.Test;

/**
 * Breaker: a user's port (lock store, cluster writer) throwing unchecked — a client bug or an
 * answer it does not map, as {@link UncheckedUsageReadTest} does for the bind — escaped the device
 * plugin's hand-off: after the pod was marked {@code success} the served containers were lost
 * (kubelet's Allocate fails, and a repeat finds the pod served: it never starts), and a failed
 * write left the pod {@code allocating} with the node locked.
 */
class UncheckedHandoffPortTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  private void bound() {
    cluster.addNode(node("n1", 1, 15360));
    String uid = cluster.addPod(pod("p1", 1, 1000, 30)).view().uid();
    assertThat(binder(cluster).build().bind(NS, "p1", uid, "n1").outcome())
        .isEqualTo(BindOutcome.BOUND);
  }

  @Test
  void aReleaseThrowingUncheckedAfterTheServiceStillReturnsTheServedContainers() {
    bound();
    ForwardingLockStore garbled =
        new ForwardingLockStore(cluster.lockStore()) {
          @Override
          public boolean deleteIfEquals(String node, String key, String expected)
              throws LockBackendException {
            super.deleteIfEquals(node, key, expected);
            throw new IllegalStateException("unmapped answer to the lock delete of " + node);
          }
        };
    DevicePluginHandoff plugin =
        DevicePluginHandoff.create(
            cluster,
            cluster,
            Fixtures.REGISTRY.vendor("NVIDIA").orElseThrow(),
            Fixtures.lockOver(garbled, cluster, Fixtures.CLOCK, LOCK_KEY));

    HandoffResult r;
    try (LogCapture log = LogCapture.start()) {
      r = plugin.allocateAll("n1");
      assertThat(log.expect("WARN dev\\.hamilock\\.bind\\.DevicePluginHandoff - .*unmapped answer"))
          .hasSize(1);
    }

    assertThat(r.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(r.handedOut())
        .singleElement()
        .satisfies(c -> assertThat(c.uuids()).containsExactly(gpu("n1", 0)));
    assertThat(r.lockReleased()).isFalse();
    assertThat(annotations(cluster, "p1")).containsEntry("hami.io/bind-phase", "success");
  }

  @Test
  void aPodWriteThrowingUncheckedFailsThePodAndReleasesTheLock() {
    bound();
    ForwardingCluster garbled =
        new ForwardingCluster(cluster, cluster) {
          boolean thrown;

          @Override
          public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
              throws ClusterException {
            if (!thrown) {
              thrown = true;
              throw new IllegalStateException("garbled patch of " + name);
            }
            return super.patchPodMetadata(namespace, name, patch);
          }
        };
    DevicePluginHandoff plugin = Fixtures.handoff(garbled, cluster);

    HandoffResult r = plugin.allocateAll("n1");

    assertThat(r.status()).isEqualTo(HandoffResult.Status.FAILED);
    assertThat(r.reason()).contains("garbled patch of p1");
    assertThat(r.handedOut()).isEmpty();
    assertThat(r.lockReleased()).isTrue();
    assertThat(lockValue(cluster, "n1")).isNull();
    assertThat(annotations(cluster, "p1")).containsEntry("hami.io/bind-phase", "failed");
  }
}
