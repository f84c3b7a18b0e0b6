package dev.hamilock.k8s.internal;

import static dev.hamilock.core.internal.Checks.checkArgument;

import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import java.util.Objects;

/** A client-java {@link V1Pod}'s metadata with namespace and name. Not part of the public API. */
public final class PodMetadata {

  private PodMetadata() {}

  /**
   * @param pod a pod with {@code metadata.namespace} and {@code metadata.name}
   * @return its metadata
   * @throws NullPointerException if {@code pod} is null
   * @throws IllegalArgumentException naming the field if metadata, namespace or name is missing
   */
  public static V1ObjectMeta require(V1Pod pod) {
    Objects.requireNonNull(pod, "pod");
    V1ObjectMeta meta = pod.getMetadata();
    checkArgument(meta != null, "pod metadata must be set");
    checkArgument(
        meta.getNamespace() != null && !meta.getNamespace().isEmpty(),
        "pod metadata.namespace must be set (pod %s)",
        meta.getName());
    checkArgument(
        meta.getName() != null && !meta.getName().isEmpty(),
        "pod metadata.name must be set (namespace %s)",
        meta.getNamespace());
    return meta;
  }
}
