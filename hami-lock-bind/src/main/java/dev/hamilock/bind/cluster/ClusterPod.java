package dev.hamilock.bind.cluster;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.device.spi.view.PodView;
import java.util.Objects;
import java.util.Optional;

/**
 * A pod as read from the cluster.
 *
 * @param view the pod; its {@link PodView#nodeName()} is set to {@code nodeName}
 * @param nodeName {@code spec.nodeName}, empty while unbound
 * @param resourceVersion {@code metadata.resourceVersion} (opaque; "" if the backend has none)
 */
public record ClusterPod(PodView view, Optional<String> nodeName, String resourceVersion) {

  /**
   * @throws NullPointerException naming the argument if one is null
   * @throws IllegalArgumentException if the node name is blank
   */
  public ClusterPod {
    Objects.requireNonNull(view, "view");
    Objects.requireNonNull(nodeName, "nodeName");
    checkArgument(
        nodeName.isEmpty() || !nodeName.get().isBlank(),
        "nodeName must not be blank when present: \"%s\"",
        nodeName.orElse(""));
    Objects.requireNonNull(resourceVersion, "resourceVersion");
    if (!view.nodeName().equals(nodeName)) {
      view = view.toBuilder().nodeName(nodeName.orElse(null)).build(); // one spec.nodeName
    }
  }

  /** {@return {@code namespace/name}} */
  public String key() {
    return view.key();
  }

  /** {@return whether {@code spec.nodeName} is set} */
  public boolean isBound() {
    return nodeName.isPresent();
  }
}
