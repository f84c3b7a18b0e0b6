package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.device.spi.view.NodeView;
import java.util.List;
import java.util.Optional;

/**
 * A {@link ClusterReader} that refuses to start a read once the calling thread is interrupted
 * ({@link ClusterException.Kind#INTERRUPTED}, the flag kept): {@link ExtenderServer} interrupts a
 * request's worker when the request's deadline (the extender HTTP timeout) passes, so a filter over
 * many candidates stops issuing reads right then instead of running on after the caller left.
 */
final class InterruptibleReader implements ClusterReader {
  private final ClusterReader delegate;

  private InterruptibleReader(ClusterReader delegate) {
    this.delegate = delegate;
  }

  static ClusterReader wrap(ClusterReader r) {
    return r instanceof InterruptibleReader ? r : new InterruptibleReader(r);
  }

  static void check(String what) throws ClusterException {
    if (Thread.currentThread().isInterrupted()) {
      throw new ClusterException(
          ClusterException.Kind.INTERRUPTED, "request deadline passed before " + what, null);
    }
  }

  @Override
  public Optional<NodeView> readNode(String name) throws ClusterException {
    check("reading node " + name);
    return delegate.readNode(name);
  }

  @Override
  public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
    check("reading pod " + namespace + "/" + name);
    return delegate.readPod(namespace, name);
  }

  @Override
  public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
    check("listing the pods assigned to node " + node);
    return delegate.listPodsAssignedTo(node);
  }

  @Override
  public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
    check("listing the pods on node " + node);
    return delegate.listPodsOnNode(node);
  }
}
