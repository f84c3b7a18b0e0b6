package dev.hamilock.bind.cluster;

import static dev.hamilock.core.internal.Checks.requireNonBlank;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * The {@link ClusterReader} reads on the Kubernetes API for every client adapter ({@link
 * KubernetesWire}); a client adds its transport ({@link #get}) and path escaping. Thread-safe if
 * {@link #get} is.
 */
public abstract class KubernetesReads implements ClusterReader {
  private final KubernetesWire.DraReads dra =
      new KubernetesWire.DraReads((what, path, query) -> get(what, path, query, true));

  protected KubernetesReads() {}

  /**
   * One GET through the client, with no {@code resourceVersion} unless {@code query} has one.
   *
   * @param what the request as failures name it, e.g. {@code GET pod default/p1}
   * @param path relative to the API server's root, e.g. {@code api/v1/nodes/gpu-1}
   * @return its 2xx answer as a JSON object; empty on 404 if {@code notFoundIsEmpty}
   * @throws ClusterException when the read fails (a 404 too, unless {@code notFoundIsEmpty})
   */
  protected abstract Optional<JsonNode> get(
      String what, String path, Map<String, String> query, boolean notFoundIsEmpty)
      throws ClusterException;

  /** {@return a namespace or object name escaped as one URL path segment} */
  protected abstract String escape(String segment);

  /** {@return the pod's path, relative to the API server's root} */
  protected final String podPath(String namespace, String name) {
    return "api/v1/namespaces/" + escape(namespace) + "/pods/" + escape(name);
  }

  /** {@inheritDoc} A malformed {@code status.allocatable} is {@code REJECTED}. */
  @Override
  public final Optional<NodeView> readNode(String name) throws ClusterException {
    requireNonBlank(name, "name");
    String what = "GET node " + name;
    Optional<JsonNode> o = get(what, "api/v1/nodes/" + escape(name), Map.of(), true);
    try {
      return o.isEmpty() ? Optional.empty() : Optional.of(JsonViews.nodeView(o.get()));
    } catch (MalformedObjectException e) {
      throw new ClusterException(ClusterException.Kind.REJECTED, what + ": " + e.getMessage(), e);
    }
  }

  @Override
  public final Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    String what = "GET pod " + namespace + "/" + name;
    Optional<JsonNode> o = get(what, podPath(namespace, name), Map.of(), true);
    return o.isEmpty() ? Optional.empty() : Optional.of(KubernetesWire.pod(what, o.get()));
  }

  /** {@inheritDoc} The lists of {@link KubernetesWire#assignedToQueries}. */
  @Override
  public final List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
    return listPodsAssignedTo(node, null);
  }

  /** {@inheritDoc} {@link KubernetesWire#assignedTo(String, KubernetesWire.PodList, Executor)}. */
  @Override
  public final List<ClusterPod> listPodsAssignedTo(String node, Executor executor)
      throws ClusterException {
    requireNonBlank(node, "node");
    return KubernetesWire.assignedTo(node, this::listPods, executor);
  }

  /** {@inheritDoc} Both lists with {@code resourceVersionMatch=NotOlderThan}. */
  @Override
  public final List<ClusterPod> listPodsAssignedTo(
      String node, Executor executor, String podVersion) throws ClusterException {
    requireNonBlank(node, "node");
    requireNonBlank(podVersion, "podVersion");
    return KubernetesWire.assignedTo(
        node, (what, q) -> listPods(what, KubernetesWire.notOlderThan(q, podVersion)), executor);
  }

  /** {@inheritDoc} {@code GET /api/v1/pods?fieldSelector=spec.nodeName%3D{node}}. */
  @Override
  public final List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
    requireNonBlank(node, "node");
    String what = "LIST pods on node " + node;
    return KubernetesWire.pods(
        what, listPods(what, Map.of("fieldSelector", "spec.nodeName=" + node)));
  }

  private JsonNode listPods(String what, Map<String, String> query) throws ClusterException {
    return get(what, "api/v1/pods", query, false).orElseThrow();
  }

  /**
   * {@inheritDoc} {@link KubernetesWire.DraReads#read}; needs RBAC {@code list} on ResourceSlices
   * and ResourceClaims (a 403 fails closed: usage would be under-counted).
   */
  @Override
  public final DraObjects readDra(Collection<String> nodes) throws ClusterException {
    return readDra(nodes, null);
  }

  /** {@inheritDoc} The ResourceClaims' LIST on {@code executor}, beside the ResourceSlices'. */
  @Override
  public final DraObjects readDra(Collection<String> nodes, Executor executor)
      throws ClusterException {
    return dra.read(nodes, false, executor);
  }

  /** {@inheritDoc} From the API server's watch cache. */
  @Override
  public final DraObjects readDraForFilter(Collection<String> nodes) throws ClusterException {
    return dra.read(nodes, true, null);
  }
}
