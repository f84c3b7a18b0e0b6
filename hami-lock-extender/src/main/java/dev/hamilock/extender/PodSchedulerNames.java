package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import java.util.Optional;

/**
 * Where both verbs learn the stored pod's {@code spec.schedulerName} (the pod in a filter request
 * is the caller's word, the bind arguments carry only names and UID). Over Kubernetes: the pod
 * informer's cache, falling back to a GET for a pod the cache has not seen yet or holds in another
 * incarnation.
 *
 * <p>A cache may answer without weakening the extender's guarantee (only pods of served schedulers
 * are written): {@code spec.schedulerName} and {@code metadata.uid} are immutable (Kubernetes
 * {@code ValidatePodUpdate}), and every write of the verbs is a patch conditioned on the UID asked
 * about here, so an answer for that UID cannot be stale.
 */
@FunctionalInterface
public interface PodSchedulerNames {
  /**
   * @param namespace the pod's namespace
   * @param name the pod's name
   * @param uid the incarnation asked about (the UID of the pod as just read); an answer for another
   *     incarnation must not be given
   * @return its {@code spec.schedulerName} ({@code default-scheduler} when the field is empty, as
   *     the API server defaults it), or empty when the pod does not exist
   * @throws ClusterException if the lookup failed
   */
  Optional<String> schedulerName(String namespace, String name, String uid) throws ClusterException;

  /**
   * The pod as a watched cache holds it, for the Filter (issue 25: no pod GET per {@code /filter}
   * where the cache is current). Safe however far the cache lags: the Filter decides on this copy
   * and conditions its patch on the copy's {@code resourceVersion}, so a copy older than the stored
   * pod fails the patch with CONFLICT and writes nothing; the extender then reads the pod fresh and
   * filters again (one GET and one more PATCH than a current cache). Never the request's copy
   * (issue 23 fault 3).
   *
   * @param namespace the pod's namespace
   * @param name the pod's name
   * @param uid the incarnation the request names; a pod cached with another UID must not be given
   * @return the cached pod of that UID, with its {@code resourceVersion}; empty (the default) when
   *     not held: the Filter reads the pod fresh (as for a copy of another UID or without a
   *     resourceVersion, which the extender does not use)
   */
  default Optional<ClusterPod> cachedPod(String namespace, String name, String uid) {
    return Optional.empty();
  }
}
