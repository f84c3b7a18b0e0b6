package dev.hamilock.bind.cluster;

import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * Port: the reads the bind flow, the extender filter and the device-plugin hand-off make. No
 * Kubernetes client types; the in-memory implementation is {@code
 * dev.hamilock.bind.memory.InMemoryCluster}, a client-java one lives in hami-lock-k8s.
 *
 * <p><b>Freshness contract</b> (the safety of the under-lock re-fit depends on it): every method
 * returns state at least as new as every write completed before the call started, in any process —
 * for Kubernetes a consistent read ({@code resourceVersion} unset), <em>never</em> an informer
 * cache, which may lag behind the previous lock holder's writes.
 *
 * <p>All methods are thread-safe, never return null, and never throw unchecked exceptions for
 * backend failures: they throw {@link ClusterException} ({@link ClusterException.Kind#UNAVAILABLE}
 * for timeouts and 5xx, {@link ClusterException.Kind#INTERRUPTED} on interruption). Absence is
 * {@code Optional.empty()}, not an exception. Node, pod and namespace names passed are non-blank.
 */
public interface ClusterReader {

  /**
   * @return the node's name, labels, annotations (registration, lock, cordon) and allocatable;
   *     empty if no such node
   * @throws ClusterException if the read failed
   */
  Optional<NodeView> readNode(String name) throws ClusterException;

  /**
   * @return the pod, empty if no such pod
   * @throws ClusterException if the read failed
   */
  Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException;

  /**
   * Lists the pods, in all namespaces, whose <em>annotation</em> {@code hami.io/vgpu-node} equals
   * {@code node}: bound pods and in-flight allocations alike (HAMi's usage source, {@code
   * pkg/scheduler/scheduler.go}, spec §2.4), whatever their phase (the caller filters). A
   * Kubernetes implementation may select by the same-named <em>label</em>, which HAMi's Filter and
   * this library always write next to the annotation, but must then keep only pods whose annotation
   * matches. A pod bound to another node than its annotation names is listed here under the
   * annotated node; the usage reconstruction counts it on its {@code spec.nodeName} only
   * (volcano#5532), where its entries, naming the annotated node's devices, match nothing.
   *
   * @return the pods, in any order
   * @throws ClusterException if the list failed
   */
  List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException;

  /**
   * {@link #listPodsAssignedTo(String)}, the same answer under the same freshness contract, its
   * requests possibly issued side by side on {@code executor} (the bind's re-fit under the lock,
   * {@link KubernetesWire#assignedTo(String, KubernetesWire.PodList, Executor)}).
   *
   * @param executor where a request may run beside the caller's; null: in sequence (the default
   *     ignores it)
   */
  default List<ClusterPod> listPodsAssignedTo(String node, Executor executor)
      throws ClusterException {
    return listPodsAssignedTo(node);
  }

  /**
   * Lists the pods, in all namespaces, whose {@code spec.nodeName} equals {@code node} (field
   * selector {@code spec.nodeName=<node>}), in the API's list order: the device plugin's fallback
   * when the node lock names no pod (HAMi {@code GetPendingPod}, {@code pkg/util/util.go}, spec
   * §3.1 step 2).
   *
   * @return the pods in list order
   * @throws ClusterException if the list failed
   */
  List<ClusterPod> listPodsOnNode(String node) throws ClusterException;

  /**
   * Reads the {@code resource.k8s.io/v1} ResourceSlices and ResourceClaims that count the DRA
   * allocations on the given nodes ({@code UsageReconstructor.plusDra}), under the same freshness
   * contract (claims are written outside the node lock). Other nodes' objects may be included. No
   * default: a port that forgot DRA would count no DRA usage, silently.
   *
   * @param nodes the names of the nodes whose usage is counted; may be empty
   * @return the slices and claims, {@link DraObjects#NONE} when the cluster serves no {@code
   *     resource.k8s.io/v1}
   * @throws ClusterException if the read failed (e.g. REJECTED without RBAC on the DRA objects)
   */
  DraObjects readDra(Collection<String> nodes) throws ClusterException;

  /**
   * {@link #readDra(Collection)}, the same answer under the same freshness contract, its requests
   * possibly issued side by side on {@code executor} (the bind's re-fit under the lock; {@link
   * KubernetesWire.DraReads#read}).
   *
   * @param executor where a request may run beside the caller's; null: in sequence (the default
   *     ignores it)
   */
  default DraObjects readDra(Collection<String> nodes, Executor executor) throws ClusterException {
    return readDra(nodes);
  }

  /**
   * {@link #readDra} for an answer that a read under the node lock checks again (the Filter's): it
   * may be served milliseconds behind (kube-apiserver's watch cache, {@code resourceVersion=0}),
   * where a consistent LIST of these rarely written objects waits for an etcd progress notification
   * (50-80 ms per LIST measured on kube-apiserver v1.37.2). The bind's re-fit keeps {@link
   * #readDra}: it counts every claim allocated before it. This default is {@link #readDra}.
   */
  default DraObjects readDraForFilter(Collection<String> nodes) throws ClusterException {
    return readDra(nodes);
  }
}
