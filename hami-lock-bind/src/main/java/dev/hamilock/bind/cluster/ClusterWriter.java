package dev.hamilock.bind.cluster;

/**
 * Port: the writes of the bind flow, the extender filter and the device-plugin hand-off. No
 * Kubernetes client types. Thread-safe; never throws unchecked exceptions for backend failures.
 *
 * <p>Each call is one request. Writes are linearizable: once a call returns, every later {@link
 * ClusterReader} call (any process) sees it. Node, pod and namespace names passed are non-blank.
 */
public interface ClusterWriter {

  /**
   * Merge-patches a pod's annotations and labels ({@code PATCH}, content type {@code
   * application/merge-patch+json}, body {@code {"metadata":{"annotations":{…},"labels":{…}}}} with
   * {@code null} for removals; {@link MetadataPatch#expectedUid()} if present goes in as {@code
   * metadata.uid}, {@link MetadataPatch#expectedResourceVersion()} as {@code
   * metadata.resourceVersion}, so a write decided on an older read never lands).
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
   * Binds a pod to a node ({@code POST .../pods/{name}/binding} with {@code metadata.name}, {@code
   * metadata.uid}, {@code metadata.resourceVersion} and {@code target: {kind: Node, name: node}}:
   * {@link KubernetesWire#binding}). kube-apiserver v1.37.2 takes the Binding's UID and
   * resourceVersion as preconditions of its update ({@code
   * pkg/registry/core/pod/storage/storage.go} {@code BindingREST.Create} → {@code
   * setPodNodeAndMetadata}, {@code storage.Preconditions}), checked before "already assigned": a
   * Binding decided on an older read of the pod never lands, not even late, after its client gave
   * up on it (a timed-out POST the server still applies). Like the API server, the node's existence
   * is not checked.
   *
   * @param uid the pod incarnation to bind; "" for any
   * @param resourceVersion the pod's {@code metadata.resourceVersion} the Binding may apply to; ""
   *     for any
   * @param node target node; non-blank
   * @return the typed outcome; never throws for API answers (see {@link BindingPostResult} for the
   *     mapping: a pod at another resourceVersion is {@link BindingPostResult.Kind#CONFLICT}, or
   *     {@link BindingPostResult.Kind#ALREADY_BOUND} if it is bound), only an interrupted call is
   *     reported as {@link BindingPostResult.Kind#AMBIGUOUS} with the interrupt flag set again
   */
  BindingPostResult bind(
      String namespace, String name, String uid, String resourceVersion, String node);

  /**
   * Evicts a pod through the Eviction API ({@code POST .../pods/{name}/eviction}, a {@code
   * policy/v1} Eviction with a UID precondition: {@link KubernetesWire#eviction}), so that
   * PodDisruptionBudgets are honoured; needs RBAC {@code create} on {@code pods/eviction}. One
   * request, never repeated. The default refuses (a backend without evictions).
   *
   * @param uid the pod incarnation to evict; "" for any
   * @throws ClusterException as kube-apiserver answers ({@code
   *     pkg/registry/core/pod/storage/eviction.go}): HTTP status 429 ({@link
   *     ClusterException.Kind#UNAVAILABLE}) when a PodDisruptionBudget refuses it; {@link
   *     ClusterException.Kind#NOT_FOUND} if no pod has that name; {@link
   *     ClusterException.Kind#CONFLICT} (409) if the pod has another UID (re-created under its
   *     name) — for a pod that is Pending, terminal or terminating only after the server retried
   *     the precondition for about 10 s ({@code EvictionsRetry}, 20 steps of 500 ms), so a client
   *     whose timeout is shorter reports a timeout ({@link ClusterException.Kind#UNAVAILABLE})
   *     instead: a caller tells "gone" by reading the pod again; other kinds as {@link
   *     ClusterException} describes
   */
  default void evictPod(String namespace, String name, String uid) throws ClusterException {
    throw new ClusterException(
        ClusterException.Kind.REJECTED, "this cluster port cannot evict pods", null);
  }

  /**
   * Records a Kubernetes Event about a pod ({@link KubernetesWire#podEvent}), best effort: the
   * flows only log its failure (warnings such as HAMi#2767's ignored policy word; routine {@code
   * Normal} ones such as a victim {@code Preempted}, as kube-scheduler's preemption records it).
   * The default records nothing (a backend without events).
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
