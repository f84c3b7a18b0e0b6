package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
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
}
