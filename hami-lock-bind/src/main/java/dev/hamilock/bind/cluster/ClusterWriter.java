package dev.hamilock.bind.cluster;

/**
 * Port: the writes of the bind flow, the extender filter and the device-plugin hand-off. No
 * Kubernetes client types. Thread-safe; never throws unchecked exceptions for backend failures.
 *
 * <p>Each call is one request. Writes are linearizable: once a call returns, every later {@link
 * ClusterReader} call (any process) sees it.
 */
public interface ClusterWriter {

  /**
   * Merge-patches a pod's annotations and labels ({@code PATCH}, content type {@code
   * application/merge-patch+json}, body {@code {"metadata":{"annotations":{…},"labels":{…}}}} with
   * {@code null} for removals; {@link MetadataPatch#expectedUid()} if present goes in as {@code
   * metadata.uid}, {@link MetadataPatch#expectedResourceVersion()} as {@code
   * metadata.resourceVersion}). The flows write an allocation with the version the decision read
   * (issue 23: a write decided on an older read must not land on a pod bound and served since);
   * before its Binding an unbound pod is written by schedulers and controllers only, not by
   * kubelet, so a conflict is rare and is decided again from a re-read, never failed blindly.
   *
   * @param namespace namespace; non-blank
   * @param name pod name; non-blank
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
   * metadata.uid} and {@code target: {kind: Node, name: node}}). Like the API server, the node's
   * existence is not checked.
   *
   * @param namespace namespace; non-blank
   * @param name pod name; non-blank
   * @param uid the pod incarnation to bind; "" for any
   * @param node target node; non-blank
   * @return the typed outcome; never throws for API answers (see {@link BindingPostResult} for the
   *     mapping), only an interrupted call is reported as {@link BindingPostResult.Kind#AMBIGUOUS}
   *     with the interrupt flag set again
   */
  BindingPostResult bind(String namespace, String name, String uid, String node);

  /**
   * Evicts a pod through the Eviction API ({@code POST .../pods/{name}/eviction}, a {@code
   * policy/v1} Eviction with a UID precondition: {@link KubernetesWire#eviction}), so that
   * PodDisruptionBudgets are honoured; needs RBAC {@code create} on {@code pods/eviction}. One
   * request, never repeated. The default refuses (a backend without evictions).
   *
   * @param namespace namespace; non-blank
   * @param name pod name; non-blank
   * @param uid the pod incarnation to evict; "" for any
   * @throws ClusterException with HTTP status 429 ({@link ClusterException.Kind#UNAVAILABLE}) when
   *     a PodDisruptionBudget refuses it (kube-apiserver {@code
   *     pkg/registry/core/pod/storage/eviction.go}), {@link ClusterException.Kind#NOT_FOUND} if the
   *     pod (that UID) is gone, other kinds as {@link ClusterException} describes
   */
  default void evictPod(String namespace, String name, String uid) throws ClusterException {
    throw new ClusterException(
        ClusterException.Kind.REJECTED, "this cluster port cannot evict pods", null);
  }

  /**
   * Records a Kubernetes Event about a pod ({@code POST /api/v1/namespaces/{ns}/events}, core/v1
   * Event with {@code involvedObject} kind Pod, name, namespace and UID, the reason and message,
   * source component {@code hami-lock}). The flows call it best effort for pod-level warnings such
   * as an ignored unknown {@code hami.io/gpu-scheduler-policy} word (HAMi#2767), and routine ones
   * ({@code Normal}: a victim {@code Preempted}, as kube-scheduler's preemption records it), and
   * only log its failure. The default records nothing (a backend without events).
   *
   * @param namespace namespace; non-blank
   * @param name pod name; non-blank
   * @param uid the pod's UID ("" if unknown)
   * @param type {@code Normal} or {@code Warning}
   * @param reason a CamelCase reason, e.g. {@code IgnoredAnnotation}
   * @param message the human-readable message
   * @throws ClusterException if the event could not be written
   */
  default void recordPodEvent(
      String namespace, String name, String uid, String type, String reason, String message)
      throws ClusterException {}
}
