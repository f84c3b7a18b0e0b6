package dev.hamilock.bind.cluster;

import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * Port: the flows' reads, without Kubernetes client types.
 *
 * <p><b>Freshness contract</b> (the safety of the under-lock re-fit depends on it): every method
 * returns state at least as new as every write completed before the call started, in any process —
 * for Kubernetes a consistent read ({@code resourceVersion} unset), <em>never</em> an informer
 * cache, which may lag behind the previous lock holder's writes. Two exceptions say what they
 * return instead: {@link #readDraForFilter} (may lag; checked before the bind uses it), {@link
 * #listPodsAssignedTo(String, Executor, String)} (at least as new as a given pod write) and {@link
 * #readNode(String, String)} (at least as new as a given node version).
 *
 * <p>All methods are thread-safe, never return null, and never throw unchecked exceptions for
 * backend failures: they throw {@link ClusterException} ({@link ClusterException.Kind#UNAVAILABLE}
 * for timeouts and 5xx, {@link ClusterException.Kind#INTERRUPTED} on interruption). Absence is
 * {@code Optional.empty()}, not an exception (the flows take an unchecked one as UNAVAILABLE,
 * {@link ForwardingCluster}). Node, pod and namespace names passed are non-blank.
 */
public interface ClusterReader {

  /**
   * @return the node's name, labels, annotations (registration, lock, cordon) and allocatable;
   *     empty if no such node
   * @throws ClusterException if the read failed
   */
  Optional<NodeView> readNode(String name) throws ClusterException;

  /**
   * {@link #readNode(String)} at least as new as {@code nodeVersion}, a node {@code
   * resourceVersion} this process conditioned its own lock write on (the node as it was when the
   * lock was seen free), rather than as new as every write completed before the call (the freshness
   * contract's exception): everything made before the previous holder released the lock is at or
   * below that version. An implementation may answer from a watch of the node once it holds a
   * version at least as new (compared within the node resource, KEP-5504). The default reads
   * consistently, which is at least as new.
   *
   * @param nodeVersion the node's {@code metadata.resourceVersion}, as a lock attempt read it
   * @return as {@link #readNode(String)}
   * @throws ClusterException if the read failed
   */
  default Optional<NodeView> readNode(String name, String nodeVersion) throws ClusterException {
    return readNode(name);
  }

  /**
   * @return the pod, empty if no such pod
   * @throws ClusterException if the read failed
   */
  Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException;

  /**
   * Lists the pods, in all namespaces and any phase, whose <em>annotation</em> {@code
   * hami.io/vgpu-node} equals {@code node}: bound pods and in-flight allocations (HAMi's usage
   * source, {@code pkg/scheduler/scheduler.go}, spec §2.4). An implementation may select by the
   * same-named label (always written beside it) but must then check the annotation.
   *
   * @return the pods, in any order
   * @throws ClusterException if the list failed
   */
  List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException;

  /**
   * {@link #listPodsAssignedTo(String)}, its requests possibly side by side on {@code executor}
   * (null: in sequence; the default ignores it).
   */
  default List<ClusterPod> listPodsAssignedTo(String node, Executor executor)
      throws ClusterException {
    return listPodsAssignedTo(node);
  }

  /**
   * {@link #listPodsAssignedTo(String, Executor)} at least as new as {@code podVersion}, a pod
   * {@code resourceVersion} this process got back from its own write, rather than as new as every
   * write completed before the call (the freshness contract's exception): the caller makes that
   * write after everything the list must show. For Kubernetes {@code resourceVersion=podVersion,
   * resourceVersionMatch=NotOlderThan}, which kube-apiserver answers from its pod watch cache as
   * soon as that cache holds the write, where a consistent LIST right after a write to another
   * resource (the node's lock) waits for an etcd progress notification (53 ms median,
   * kube-apiserver v1.37.2, {@code testing/realcluster/SCHEDULER.md}). The default reads
   * consistently, which is at least as new.
   */
  default List<ClusterPod> listPodsAssignedTo(String node, Executor executor, String podVersion)
      throws ClusterException {
    return listPodsAssignedTo(node, executor);
  }

  /**
   * Lists the pods, in all namespaces, whose {@code spec.nodeName} equals {@code node}: the device
   * plugin's fallback (HAMi {@code GetPendingPod}, {@code pkg/util/util.go}, spec §3.1 step 2).
   *
   * @return the pods in list order
   * @throws ClusterException if the list failed
   */
  List<ClusterPod> listPodsOnNode(String node) throws ClusterException;

  /**
   * Reads the {@code resource.k8s.io/v1} ResourceSlices and ResourceClaims of the nodes ({@code
   * UsageReconstructor.plusDra}; claims are written outside the node lock). Other nodes' objects
   * may be included. No default: a port that forgot DRA would silently count no DRA usage.
   *
   * @return the slices and claims, {@link DraObjects#NONE} when {@code resource.k8s.io/v1} is not
   *     served
   * @throws ClusterException if the read failed (e.g. REJECTED without RBAC on the DRA objects)
   */
  DraObjects readDra(Collection<String> nodes) throws ClusterException;

  /**
   * {@link #readDra(Collection)}, its requests possibly side by side on {@code executor} (null: in
   * sequence; the default ignores it).
   */
  default DraObjects readDra(Collection<String> nodes, Executor executor) throws ClusterException {
    return readDra(nodes);
  }

  /**
   * {@link #readDra} that may lag: from the watch cache ({@code resourceVersion=0}) or an informer,
   * as a consistent LIST of these rarely written objects waits for an etcd progress notification
   * (50-80 ms, kube-apiserver v1.37.2). For the Filter, whose answer the bind re-checks under the
   * lock, and for that re-check once {@code DraObjects.unconfirmedClaim} finds in it every claim of
   * the pods that matter in its final state (else the bind reads {@link #readDra}).
   */
  default DraObjects readDraForFilter(Collection<String> nodes) throws ClusterException {
    return readDra(nodes);
  }
}
