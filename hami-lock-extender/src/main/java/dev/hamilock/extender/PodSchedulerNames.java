package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import java.util.Optional;

/**
 * Where both verbs learn the stored pod's {@code spec.schedulerName}; over Kubernetes the pod
 * informer's cache, falling back to a GET. A cache may answer: {@code spec.schedulerName} and
 * {@code metadata.uid} are immutable (Kubernetes {@code ValidatePodUpdate}), and every write of the
 * verbs is a patch conditioned on the UID asked about here.
 */
@FunctionalInterface
public interface PodSchedulerNames {
  /**
   * @param uid the incarnation asked about; an answer for another incarnation must not be given
   * @return its {@code spec.schedulerName} ({@code default-scheduler} when the field is empty), or
   *     empty when the pod does not exist
   * @throws ClusterException if the lookup failed
   */
  Optional<String> schedulerName(String namespace, String name, String uid) throws ClusterException;

  /**
   * The pod as a watched cache holds it, for the Filter (no pod GET per {@code /filter}). Safe
   * however far the cache lags: the Filter conditions its patch on the copy's {@code
   * resourceVersion}, so a stale copy fails with CONFLICT and writes nothing; the extender then
   * reads the pod fresh and filters again.
   *
   * @param uid the incarnation the request names; a pod cached with another UID must not be given
   * @return the cached pod of that UID, with its {@code resourceVersion}; empty (the default) when
   *     not held: the Filter reads the pod fresh
   */
  default Optional<ClusterPod> cachedPod(String namespace, String name, String uid) {
    return Optional.empty();
  }
}
