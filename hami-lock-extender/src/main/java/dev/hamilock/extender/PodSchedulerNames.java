package dev.hamilock.extender;

import dev.hamilock.bind.cluster.ClusterException;
import java.util.Optional;

/**
 * Where the bind verb learns a pod's {@code spec.schedulerName} (the extender's bind arguments
 * carry only names and UID). Over Kubernetes: the pod informer's cache, falling back to a GET for a
 * pod the cache has not seen yet.
 */
@FunctionalInterface
public interface PodSchedulerNames {
  /**
   * @param namespace the pod's namespace
   * @param name the pod's name
   * @return its {@code spec.schedulerName} ({@code default-scheduler} when the field is empty, as
   *     the API server defaults it), or empty when the pod does not exist
   * @throws ClusterException if the lookup failed
   */
  Optional<String> schedulerName(String namespace, String name) throws ClusterException;
}
