package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import java.util.Optional;

/**
 * Where the verbs learn a stored pod's {@code spec.schedulerName}, e.g. from an informer cache: it
 * and {@code metadata.uid} are immutable ({@code ValidatePodUpdate}) and every write is conditioned
 * on the UID.
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
   * The pod as a watched cache holds it, saving the Filter a GET; a stale copy is safe, as the
   * Filter's patch is conditioned on its {@code resourceVersion} (CONFLICT, then a fresh read).
   *
   * @param uid the incarnation the request names; a pod cached with another UID must not be given
   * @return the cached pod with its {@code resourceVersion}; empty (the default) when not held
   */
  default Optional<ClusterPod> cachedPod(String namespace, String name, String uid) {
    return Optional.empty();
  }
}
