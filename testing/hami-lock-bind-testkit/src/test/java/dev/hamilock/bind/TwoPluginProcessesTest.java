package dev.hamilock.bind;

import static dev.hamilock.bind.Fixtures.NS;
import static dev.hamilock.bind.Fixtures.TO_ALLOCATE;
import static dev.hamilock.bind.Fixtures.annotations;
import static dev.hamilock.bind.Fixtures.binder;
import static dev.hamilock.bind.Fixtures.lockValue;
import static dev.hamilock.bind.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Two device-plugin instances on one node (a rolling DaemonSet update, or two {@link
 * DevicePluginHandoff}s over one cluster): each serializes its own calls only, so both can read the
 * pod's to-allocate list before either writes it back.
 */
class TwoPluginProcessesTest {
  final InMemoryCluster cluster = InMemoryCluster.create();

  @Test
  void twoPluginsNeverHandOutTheSameContainerEntry() {
    cluster.addNode(node("n1", 2, 15360));
    PodView pod =
        PodView.builder(NS, "two")
            .containers(
                List.of(Fixtures.container("a", 1, 1000, 10), Fixtures.container("b", 1, 2000, 20)))
            .build();
    String uid = cluster.addPod(pod).view().uid();
    assertThat(binder(cluster).build().bind(NS, "two", uid, "n1").outcome())
        .isEqualTo(BindOutcome.BOUND);
    DevicePluginHandoff other = Fixtures.handoff(cluster);
    List<HandoffResult> otherResults = new ArrayList<>();
    // The second plugin serves a call after this one has read the pod and before its write lands.
    ForwardingCluster interleaving =
        new ForwardingCluster(cluster, cluster) {
          @Override
          public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
              throws ClusterException {
            if (otherResults.isEmpty()) {
              otherResults.add(other.allocate("n1", List.of(1)));
            }
            return super.patchPodMetadata(namespace, name, patch);
          }
        };
    DevicePluginHandoff plugin = Fixtures.handoff(interleaving, cluster);

    HandoffResult mine = plugin.allocate("n1", List.of(1));

    HandoffResult theirs = otherResults.get(0);
    assertThat(theirs.status()).isEqualTo(HandoffResult.Status.PARTIAL);
    assertThat(theirs.handedOut()).singleElement().extracting(c -> c.containerIndex()).isEqualTo(0);
    assertThat(mine.handedOut())
        .as("container 0's devices were already handed out by the other plugin: %s", mine)
        .allSatisfy(c -> assertThat(c.containerIndex()).isNotEqualTo(0));
    assertThat(mine.status()).isEqualTo(HandoffResult.Status.COMPLETED);
    assertThat(mine.handedOut()).singleElement().extracting(c -> c.containerIndex()).isEqualTo(1);
    assertThat(annotations(cluster, "two"))
        .containsEntry(TO_ALLOCATE, ";;")
        .containsEntry("hami.io/bind-phase", "success");
    assertThat(lockValue(cluster, "n1")).isNull();
  }
}
