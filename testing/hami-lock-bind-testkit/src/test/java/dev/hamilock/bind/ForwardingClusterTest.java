package dev.hamilock.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.device.spi.view.NodeView;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The one decorator base of the cluster ports (issue 27 item 5): a decorator overrides only what it
 * changes, everything else reaches the delegate.
 */
class ForwardingClusterTest {

  @Test
  void aGateSeesEveryReadBeforeItIsForwardedAndNothingElse() throws Exception {
    InMemoryCluster cluster = InMemoryCluster.create();
    cluster.addNode(NodeView.of("node-a", Map.of()));
    List<String> seen = new ArrayList<>();
    ForwardingCluster gate =
        new ForwardingCluster(cluster, cluster) {
          @Override
          protected void beforeRead(String what) {
            seen.add(what);
          }
        };
    assertThat(gate.readNode("node-a")).isPresent();
    assertThat(gate.readPod("default", "p")).isEmpty();
    assertThat(gate.listPodsAssignedTo("node-a")).isEmpty();
    assertThat(gate.listPodsOnNode("node-a")).isEmpty();
    assertThat(seen)
        .containsExactly(
            "reading node node-a",
            "reading pod default/p",
            "listing the pods assigned to node node-a",
            "listing the pods on node node-a");
  }

  @Test
  void aRefusingGateStopsTheReadBeforeTheDelegate() {
    ClusterReader failing =
        (ClusterReader)
            java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {ClusterReader.class},
                (proxy, method, args) -> {
                  throw new AssertionError("the delegate was read: " + method.getName());
                });
    ForwardingCluster closed =
        new ForwardingCluster(failing, null) {
          @Override
          protected void beforeRead(String what) throws ClusterException {
            throw new ClusterException(ClusterException.Kind.REJECTED, "closed: " + what, null);
          }
        };
    assertThatThrownBy(() -> closed.readNode("node-a"))
        .isInstanceOf(ClusterException.class)
        .hasMessage("closed: reading node node-a");
  }

  @Test
  void aDecoratorOfOnePortNamesItselfWhenTheOtherIsUsed() {
    List<String> warnings = new ArrayList<>();
    ClusterWriter events =
        new ForwardingCluster(null, InMemoryCluster.create()) {
          @Override
          public void recordPodEvent(
              String namespace,
              String name,
              String uid,
              String type,
              String reason,
              String message) {
            warnings.add(reason);
          }

          @Override
          public String toString() {
            return "events";
          }
        };
    assertThatThrownBy(() -> ((ClusterReader) events).readNode("node-a"))
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("forwards no reads");
    assertThatThrownBy(() -> new ForwardingCluster(null, null) {})
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("reader and writer");
    assertThat(warnings).isEmpty();
  }
}
