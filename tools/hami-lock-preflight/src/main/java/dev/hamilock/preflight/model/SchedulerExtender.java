package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.YamlPath;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One {@code extenders[i]} entry of a {@code KubeSchedulerConfiguration}.
 *
 * @param urlPrefix {@code urlPrefix}, when present
 * @param bindVerb {@code bindVerb}, when present and non-blank (HAMi's chart writes {@code bind})
 * @param httpTimeout {@code httpTimeout} as written (Go duration text, e.g. {@code 30s}), when
 *     present; kube-scheduler uses 5 s when it is absent or zero
 * @param managedResources names under {@code managedResources[*].name}
 * @param document the configuration document
 * @param path path of the entry, e.g. {@code extenders[0]}
 * @param ignorable {@code ignorable: true} (kube-scheduler skips the extender when it fails; since
 *     kubernetes#122503 also its bind, falling back to the default binder)
 */
public record SchedulerExtender(
    Optional<String> urlPrefix,
    Optional<String> bindVerb,
    Optional<String> httpTimeout,
    List<String> managedResources,
    ManifestDocument document,
    String path,
    boolean ignorable) {

  /**
   * kube-scheduler's {@code IsInterested}: an extender without managed resources gets every pod;
   * otherwise only pods whose containers or init containers name one of them under {@code requests}
   * or {@code limits}.
   *
   * @param resources the resource names a pod's containers request or limit
   * @return whether kube-scheduler sends the pod to this extender (filter and bind)
   */
  public boolean isInterestedIn(java.util.Collection<String> resources) {
    return managedResources.isEmpty() || resources.stream().anyMatch(managedResources::contains);
  }

  /** Copies the list; validates non-null components. */
  public SchedulerExtender {
    Objects.requireNonNull(urlPrefix, "urlPrefix");
    Objects.requireNonNull(bindVerb, "bindVerb");
    Objects.requireNonNull(httpTimeout, "httpTimeout");
    managedResources = List.copyOf(managedResources);
    Objects.requireNonNull(document, "document");
    Objects.requireNonNull(path, "path");
  }

  /**
   * @param relative path below the entry, e.g. {@code httpTimeout}
   * @return its location
   */
  public Location location(String relative) {
    return document.location(YamlPath.join(path, relative));
  }
}
