package dev.hamilock.bind.cluster;

/**
 * Port: the flows' writes, without Kubernetes client types. Thread-safe; never throws unchecked
 * exceptions for backend failures (the flows take one as an unknown outcome, {@link
 * ForwardingCluster}). Each call is one request. Writes are linearizable: once a call returns,
 * every later {@link ClusterReader} call (any process) sees it. Node, pod and namespace names
 * passed are non-blank.
 */
public interface ClusterWriter {

  /**
   * Merge-patches a pod's annotations and labels ({@link KubernetesWire#mergePatch}; the expected
   * UID and resourceVersion are preconditions, so a write decided on an older read never lands).
   *
   * @param patch the changes; an empty patch is still one request (an existence check)
   * @return the pod as stored after the patch
   * @throws ClusterException {@link ClusterException.Kind#NOT_FOUND} if the pod (or the expected
   *     incarnation) does not exist; {@link ClusterException.Kind#CONFLICT} if it is no longer at
   *     the expected resourceVersion; {@link ClusterException.Kind#UNAVAILABLE} if the outcome is
   *     unknown; other kinds as described in {@link ClusterException}
   */
  ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
      throws ClusterException;

  /**
   * Binds a pod to a node ({@link KubernetesWire#binding}). kube-apiserver v1.37.2 checks the
   * Binding's UID and resourceVersion as preconditions before "already assigned" ({@code
   * pkg/registry/core/pod/storage/storage.go} {@code BindingREST.Create}), so a Binding decided on
   * an older read never lands, not even late after a timed-out POST. The node's existence is not
   * checked.
   *
   * @param uid the pod incarnation to bind; "" for any
   * @param resourceVersion the pod version the Binding may apply to; "" for any
   * @return the typed outcome ({@link KubernetesWire#bindingAnswer}); never throws for API answers;
   *     an interrupted call is {@link BindingPostResult.Kind#AMBIGUOUS}, interrupt flag set again
   */
  BindingPostResult bind(
      String namespace, String name, String uid, String resourceVersion, String node);

  /**
   * Evicts a pod through the Eviction API ({@link KubernetesWire#eviction}), so PDBs are honoured;
   * needs RBAC {@code create} on {@code pods/eviction}. One request, never repeated. The default
   * refuses.
   *
   * @param uid the pod incarnation to evict; "" for any
   * @throws ClusterException as kube-apiserver answers ({@code
   *     pkg/registry/core/pod/storage/eviction.go}): status 429 ({@link
   *     ClusterException.Kind#UNAVAILABLE}) when a PDB refuses; {@link
   *     ClusterException.Kind#NOT_FOUND}; {@link ClusterException.Kind#CONFLICT} for another UID,
   *     for some pods only after ~10 s of server retries ({@code EvictionsRetry}), so a shorter
   *     client timeout reports UNAVAILABLE instead: a caller tells "gone" by reading again
   */
  default void evictPod(String namespace, String name, String uid) throws ClusterException {
    throw new ClusterException(
        ClusterException.Kind.REJECTED, "this cluster port cannot evict pods", null);
  }

  /**
   * Records an Event about a pod ({@link KubernetesWire#podEvent}), best effort: the flows only log
   * its failure. The default records nothing.
   *
   * @param uid the pod's UID ("" if unknown)
   * @param type {@code Normal} or {@code Warning}
   * @param reason a CamelCase reason, e.g. {@code IgnoredAnnotation} (HAMi#2767)
   * @throws ClusterException if the event could not be written
   */
  default void recordPodEvent(
      String namespace, String name, String uid, String type, String reason, String message)
      throws ClusterException {}
}
