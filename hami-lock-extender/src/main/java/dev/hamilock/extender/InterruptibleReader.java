package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ForwardingCluster;

/**
 * A {@link ClusterReader} refusing new reads once the thread is interrupted (a filter past its
 * deadline), with {@link ClusterException.Kind#INTERRUPTED}, the flag kept.
 */
final class InterruptibleReader extends ForwardingCluster {

  private InterruptibleReader(ClusterReader delegate) {
    super(delegate, null);
  }

  static ClusterReader wrap(ClusterReader r) {
    return r instanceof InterruptibleReader ? r : new InterruptibleReader(r);
  }

  @Override
  protected void beforeRead(String what) throws ClusterException {
    if (Thread.currentThread().isInterrupted()) {
      throw new ClusterException(
          ClusterException.Kind.INTERRUPTED, "request deadline passed before " + what, null);
    }
  }
}
