package dev.hamilock.preflight.model;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One container of a pod template (regular or init container).
 *
 * @param name {@code name}, or {@code ""} when missing
 * @param image {@code image}, when present
 * @param init whether it is listed under {@code initContainers}
 * @param path path relative to the pod spec's owner document, e.g. {@code
 *     spec.template.spec.containers[0]}
 * @param limits {@code resources.limits}, values as written (Kubernetes quantity text)
 * @param requests {@code resources.requests}, values as written
 */
public record ContainerSpec(
    String name,
    Optional<String> image,
    boolean init,
    String path,
    Map<String, String> limits,
    Map<String, String> requests) {

  /** Copies the maps; validates non-null components. */
  public ContainerSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(image, "image");
    Objects.requireNonNull(path, "path");
    limits = Map.copyOf(limits);
    requests = Map.copyOf(requests);
  }
}
