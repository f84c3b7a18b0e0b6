package dev.hamilock.examples.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.cluster.KubernetesWire;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.k8s.view.KubernetesViews;
import io.kubernetes.client.openapi.models.V1Node;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;

/**
 * {@link WatchedCache#bindReader}: the bind flow's reader, whose node read at the lock's version
 * and DRA snapshot come from the cache's informers (issue 25 item 2); its pod lists come from the
 * {@code WatchedPods} reader it forwards to, everything else from the fresh reader behind that.
 */
final class BindReader extends ForwardingCluster {
  private final WatchedCache cache;
  private final Duration wait;

  BindReader(WatchedCache cache, ClusterReader reader, Duration wait) {
    super(reader, null);
    this.cache = cache;
    this.wait = wait;
  }

  /**
   * {@inheritDoc} From the node informer once its copy is at least at {@code nodeVersion} (one
   * object's events keep their order, even through a {@code DeltaFIFO}), looking every ms for up to
   * the hedge; else one fresh read.
   */
  @Override
  public Optional<NodeView> readNode(String name, String nodeVersion) throws ClusterException {
    long at = KubernetesWire.resourceVersion(nodeVersion);
    long deadline = System.nanoTime() + wait.toNanos();
    try {
      while (at >= 0) {
        V1Node n = cache.nodeCopy(name);
        if (n != null
            && KubernetesWire.resourceVersion(n.getMetadata().getResourceVersion()) >= at) {
          return Optional.of(KubernetesViews.nodeView(n));
        }
        if (System.nanoTime() >= deadline) {
          break;
        }
        // polled: an event handler would add a thread that client-java's stop logs at ERROR
        Thread.sleep(1);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ClusterException(
          ClusterException.Kind.INTERRUPTED, "waiting for the node informer", e);
    }
    return super.readNode(name, nodeVersion);
  }

  /** {@inheritDoc} The Filter's: from the DRA informers once synced. */
  @Override
  public DraObjects readDraForFilter(Collection<String> nodes) throws ClusterException {
    return cache.readDraForFilter(nodes);
  }
}
