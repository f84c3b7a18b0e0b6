package dev.hamilock.k8s.stack;

import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.k8s.bind.KubernetesCluster;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The whole stack's cluster ports: {@link KubernetesCluster} behind a gate that refuses reads once
 * the stack is closed ({@link ClusterException.Kind#REJECTED}) or the calling thread is interrupted
 * ({@link ClusterException.Kind#INTERRUPTED}). Every flow starts with a read, so a closed stack
 * does no new work; writes pass, so a flow in flight can clean up. Pod Warning Events go to the
 * configured sink. Thread-safe.
 */
final class StackPorts implements ClusterReader, ClusterWriter {
  private final KubernetesCluster cluster;
  private final KubernetesHamiStack.PodWarningSink warnings;
  private final AtomicBoolean closed = new AtomicBoolean();

  StackPorts(KubernetesCluster cluster, KubernetesHamiStack.PodWarningSink warnings) {
    this.cluster = cluster;
    this.warnings = warnings;
  }

  void close() {
    closed.set(true);
  }

  boolean isClosed() {
    return closed.get();
  }

  private void admit(String what) throws ClusterException {
    if (closed.get()) {
      throw new ClusterException(
          ClusterException.Kind.REJECTED,
          "the hami-lock stack is closed (KubernetesHamiStack.close()); refusing " + what,
          null);
    }
    if (Thread.currentThread().isInterrupted()) {
      throw new ClusterException(
          ClusterException.Kind.INTERRUPTED,
          "the calling thread was interrupted before " + what,
          null);
    }
  }

  @Override
  public Optional<NodeView> readNode(String name) throws ClusterException {
    admit("reading node " + name);
    return cluster.readNode(name);
  }

  @Override
  public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
    admit("reading pod " + namespace + "/" + name);
    return cluster.readPod(namespace, name);
  }

  @Override
  public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
    admit("listing the pods assigned to node " + node);
    return cluster.listPodsAssignedTo(node);
  }

  @Override
  public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
    admit("listing the pods on node " + node);
    return cluster.listPodsOnNode(node);
  }

  @Override
  public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
      throws ClusterException {
    return cluster.patchPodMetadata(namespace, name, patch);
  }

  @Override
  public BindingPostResult bind(String namespace, String name, String uid, String node) {
    return cluster.bind(namespace, name, uid, node);
  }

  @Override
  public void recordPodWarning(
      String namespace, String name, String uid, String reason, String message)
      throws ClusterException {
    warnings.recordPodWarning(namespace, name, uid, reason, message);
  }

  @Override
  public String toString() {
    return "StackPorts[" + cluster + (closed.get() ? ", closed" : "") + "]";
  }
}
