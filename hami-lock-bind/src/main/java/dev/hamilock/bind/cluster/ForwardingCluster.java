package dev.hamilock.bind.cluster;

import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * The decorator base of the cluster ports (as Guava's {@code ForwardingObject}): forwards reads to
 * a reader and writes to a writer, so a decorator overrides only what it changes (a gate in {@link
 * #beforeRead}, a cache behind some reads, limits on Events). Thread-safe if the delegates are.
 */
public abstract class ForwardingCluster implements ClusterReader, ClusterWriter {
  private final ClusterReader reader;
  private final ClusterWriter writer;

  /** Whether a subclass overrides {@link #listPodsAssignedTo(String)}. */
  private final boolean listsChanged;

  /** Whether a subclass overrides {@link #readDra(Collection)}. */
  private final boolean draChanged;

  /**
   * Either may be {@code null} (its calls then throw {@link UnsupportedOperationException}).
   *
   * @throws NullPointerException if both are null
   */
  protected ForwardingCluster(ClusterReader reader, ClusterWriter writer) {
    if (reader == null) {
      Objects.requireNonNull(writer, "reader and writer");
    }
    this.reader = reader;
    this.writer = writer;
    listsChanged = changes("listPodsAssignedTo", String.class);
    draChanged = changes("readDra", Collection.class);
  }

  private boolean changes(String method, Class<?> parameter) {
    try {
      return getClass().getMethod(method, parameter).getDeclaringClass() != ForwardingCluster.class;
    } catch (NoSuchMethodException e) {
      throw new AssertionError(e); // a public method of ClusterReader
    }
  }

  private ClusterReader reader() {
    if (reader == null) {
      throw new UnsupportedOperationException(getClass().getSimpleName() + " forwards no reads");
    }
    return reader;
  }

  private ClusterWriter writer() {
    if (writer == null) {
      throw new UnsupportedOperationException(getClass().getSimpleName() + " forwards no writes");
    }
    return writer;
  }

  /**
   * Called before every read is forwarded ({@code what}: e.g. {@code reading node gpu-1}).
   *
   * @throws ClusterException to refuse the read
   */
  protected void beforeRead(String what) throws ClusterException {}

  @Override
  public Optional<NodeView> readNode(String name) throws ClusterException {
    beforeRead("reading node " + name);
    return reader().readNode(name);
  }

  @Override
  public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
    beforeRead("reading pod " + namespace + "/" + name);
    return reader().readPod(namespace, name);
  }

  @Override
  public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
    beforeRead("listing the pods assigned to node " + node);
    return reader().listPodsAssignedTo(node);
  }

  /** Forwarded, unless a subclass overrides {@link #listPodsAssignedTo(String)}: then that one. */
  @Override
  public List<ClusterPod> listPodsAssignedTo(String node, Executor executor)
      throws ClusterException {
    if (listsChanged) {
      return listPodsAssignedTo(node);
    }
    beforeRead("listing the pods assigned to node " + node);
    return reader().listPodsAssignedTo(node, executor);
  }

  /** Forwarded, unless a subclass overrides {@link #listPodsAssignedTo(String)}: then that one. */
  @Override
  public List<ClusterPod> listPodsAssignedTo(String node, Executor executor, String podVersion)
      throws ClusterException {
    if (listsChanged) {
      return listPodsAssignedTo(node);
    }
    beforeRead("listing the pods assigned to node " + node);
    return reader().listPodsAssignedTo(node, executor, podVersion);
  }

  @Override
  public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
    beforeRead("listing the pods on node " + node);
    return reader().listPodsOnNode(node);
  }

  @Override
  public DraObjects readDra(Collection<String> nodes) throws ClusterException {
    beforeRead("reading the DRA objects of nodes " + nodes);
    return reader().readDra(nodes);
  }

  /** Forwarded, unless a subclass overrides {@link #readDra(Collection)}: then that one. */
  @Override
  public DraObjects readDra(Collection<String> nodes, Executor executor) throws ClusterException {
    if (draChanged) {
      return readDra(nodes);
    }
    beforeRead("reading the DRA objects of nodes " + nodes);
    return reader().readDra(nodes, executor);
  }

  /** Forwarded, unless a subclass overrides {@link #readDra(Collection)}: then that one. */
  @Override
  public DraObjects readDraForFilter(Collection<String> nodes) throws ClusterException {
    if (draChanged) {
      return readDra(nodes);
    }
    beforeRead("reading the DRA objects of nodes " + nodes);
    return reader().readDraForFilter(nodes);
  }

  @Override
  public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
      throws ClusterException {
    return writer().patchPodMetadata(namespace, name, patch);
  }

  @Override
  public BindingPostResult bind(
      String namespace, String name, String uid, String resourceVersion, String node) {
    return writer().bind(namespace, name, uid, resourceVersion, node);
  }

  @Override
  public void evictPod(String namespace, String name, String uid) throws ClusterException {
    writer().evictPod(namespace, name, uid);
  }

  @Override
  public void recordPodEvent(
      String namespace, String name, String uid, String type, String reason, String message)
      throws ClusterException {
    writer().recordPodEvent(namespace, name, uid, type, reason, message);
  }
}
