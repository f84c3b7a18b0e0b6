package dev.hamilock.bind.cluster;

import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Executor;

/**
 * The decorator base of the cluster ports (as Guava's {@code ForwardingObject}): forwards reads to
 * a reader and writes to a writer, so a decorator overrides only what it changes (a gate in {@link
 * #beforeRead}, a cache behind some reads, limits on Events). Thread-safe if the delegates are.
 *
 * <p>A delegate's unchecked exception (a client's bug, an answer it does not map) is forwarded as
 * {@link ClusterException.Kind#UNAVAILABLE}, an outcome unknown as after a timeout, and a Binding's
 * as {@link BindingPostResult.Kind#AMBIGUOUS}: the flows take every port through one of these, so a
 * port's bug fails one call typed and cleaned up, never a thread, and never leaves a lock held.
 */
public abstract class ForwardingCluster implements ClusterReader, ClusterWriter {
  private final ClusterReader reader;
  private final ClusterWriter writer;

  /** Whether a subclass overrides {@link #listPodsAssignedTo(String)}. */
  private final boolean listsChanged;

  /** Whether a subclass overrides {@link #readDra(Collection)}. */
  private final boolean draChanged;

  /** Whether a subclass overrides {@link #readNode(String)}. */
  private final boolean nodeChanged;

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
    nodeChanged = changes("readNode", String.class);
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
    return read("reading node " + name, r -> r.readNode(name));
  }

  /** Forwarded, unless a subclass overrides {@link #readNode(String)}: then that one. */
  @Override
  public Optional<NodeView> readNode(String name, String nodeVersion) throws ClusterException {
    if (nodeChanged) {
      return readNode(name);
    }
    return read("reading node " + name, r -> r.readNode(name, nodeVersion));
  }

  @Override
  public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
    return read("reading pod " + namespace + "/" + name, r -> r.readPod(namespace, name));
  }

  @Override
  public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
    return read("listing the pods assigned to node " + node, r -> r.listPodsAssignedTo(node));
  }

  /** Forwarded, unless a subclass overrides {@link #listPodsAssignedTo(String)}: then that one. */
  @Override
  public List<ClusterPod> listPodsAssignedTo(String node, Executor executor)
      throws ClusterException {
    if (listsChanged) {
      return listPodsAssignedTo(node);
    }
    return read(
        "listing the pods assigned to node " + node, r -> r.listPodsAssignedTo(node, executor));
  }

  /** Forwarded, unless a subclass overrides {@link #listPodsAssignedTo(String)}: then that one. */
  @Override
  public List<ClusterPod> listPodsAssignedTo(String node, Executor executor, String podVersion)
      throws ClusterException {
    if (listsChanged) {
      return listPodsAssignedTo(node);
    }
    return read(
        "listing the pods assigned to node " + node,
        r -> r.listPodsAssignedTo(node, executor, podVersion));
  }

  @Override
  public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
    return read("listing the pods on node " + node, r -> r.listPodsOnNode(node));
  }

  @Override
  public DraObjects readDra(Collection<String> nodes) throws ClusterException {
    return read("reading the DRA objects of nodes " + nodes, r -> r.readDra(nodes));
  }

  /** Forwarded, unless a subclass overrides {@link #readDra(Collection)}: then that one. */
  @Override
  public DraObjects readDra(Collection<String> nodes, Executor executor) throws ClusterException {
    if (draChanged) {
      return readDra(nodes);
    }
    return read("reading the DRA objects of nodes " + nodes, r -> r.readDra(nodes, executor));
  }

  /** Forwarded, unless a subclass overrides {@link #readDra(Collection)}: then that one. */
  @Override
  public DraObjects readDraForFilter(Collection<String> nodes) throws ClusterException {
    if (draChanged) {
      return readDra(nodes);
    }
    return read("reading the DRA objects of nodes " + nodes, r -> r.readDraForFilter(nodes));
  }

  @Override
  public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
      throws ClusterException {
    String what = "patching pod " + namespace + "/" + name;
    return checked(what, writer(), w -> w.patchPodMetadata(namespace, name, patch));
  }

  /** Forwarded; an unchecked exception is {@code AMBIGUOUS} (the POST may have applied). */
  @Override
  public BindingPostResult bind(
      String namespace, String name, String uid, String resourceVersion, String node) {
    ClusterWriter w = writer();
    try {
      return w.bind(namespace, name, uid, resourceVersion, node);
    } catch (RuntimeException e) {
      String why = "%s threw on the Binding of pod %s/%s: %s".formatted(w, namespace, name, e);
      return BindingPostResult.ambiguous(why).withAnswer(OptionalInt.empty(), e);
    }
  }

  @Override
  public void evictPod(String namespace, String name, String uid) throws ClusterException {
    String what = "evicting pod " + namespace + "/" + name;
    checked(
        what,
        writer(),
        w -> {
          w.evictPod(namespace, name, uid);
          return null;
        });
  }

  @Override
  public void recordPodEvent(
      String namespace, String name, String uid, String type, String reason, String message)
      throws ClusterException {
    String what = "recording an event of pod " + namespace + "/" + name;
    checked(
        what,
        writer(),
        w -> {
          w.recordPodEvent(namespace, name, uid, type, reason, message);
          return null;
        });
  }

  @FunctionalInterface
  private interface Call<P, T> {
    T on(P port) throws ClusterException;
  }

  /** {@link #beforeRead}, then {@code read} of the reader, checked. */
  private <T> T read(String what, Call<ClusterReader, T> read) throws ClusterException {
    ClusterReader r = reader();
    beforeRead(what);
    return checked(what, r, read);
  }

  /** {@code call} on {@code port}, an unchecked exception as UNAVAILABLE (an outcome unknown). */
  private static <P, T> T checked(String what, P port, Call<P, T> call) throws ClusterException {
    try {
      return call.on(port);
    } catch (RuntimeException e) {
      String why = what + " failed: " + port + " threw " + e;
      throw new ClusterException(ClusterException.Kind.UNAVAILABLE, why, e);
    }
  }
}
