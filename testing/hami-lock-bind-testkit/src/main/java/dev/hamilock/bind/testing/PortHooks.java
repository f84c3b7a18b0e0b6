package dev.hamilock.bind.testing;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The ports as a binder sees them, with an action at the two moments the other-writer scenarios
 * need: after a listing of the pods assigned to a node (a binder's usage read under the lock), and
 * right before a Binding POST (after the binder's last confirmation).
 */
final class PortHooks {
  private PortHooks() {}

  /**
   * @param pods applied to every pod read
   * @param afterUsageRead called with the node after each {@link ClusterReader#listPodsAssignedTo}
   * @return the reader with those hooks
   */
  static ClusterReader reader(
      ClusterReader reader, UnaryOperator<ClusterPod> pods, Consumer<String> afterUsageRead) {
    return new ClusterReader() {
      @Override
      public Optional<NodeView> readNode(String name) throws ClusterException {
        return reader.readNode(name);
      }

      @Override
      public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
        return reader.readPod(namespace, name).map(pods);
      }

      @Override
      public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
        List<ClusterPod> out = reader.listPodsAssignedTo(node).stream().map(pods).toList();
        afterUsageRead.accept(node);
        return out;
      }

      @Override
      public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
        return reader.listPodsOnNode(node).stream().map(pods).toList();
      }

      @Override
      public DraObjects readDra(Collection<String> nodes) throws ClusterException {
        return reader.readDra(nodes);
      }
    };
  }

  /**
   * @param beforeBinding called with the pod name and the node before each {@link
   *     ClusterWriter#bind}
   * @return the writer with that hook
   */
  static ClusterWriter writer(ClusterWriter writer, BiConsumer<String, String> beforeBinding) {
    return new ClusterWriter() {
      @Override
      public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
          throws ClusterException {
        return writer.patchPodMetadata(namespace, name, patch);
      }

      @Override
      public BindingPostResult bind(
          String namespace, String name, String uid, String rv, String node) {
        beforeBinding.accept(name, node);
        return writer.bind(namespace, name, uid, rv, node);
      }

      @Override
      public void recordPodEvent(
          String namespace, String name, String uid, String type, String reason, String message)
          throws ClusterException {
        writer.recordPodEvent(namespace, name, uid, type, reason, message);
      }
    };
  }
}
