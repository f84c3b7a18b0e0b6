package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import java.util.List;
import java.util.Objects;

/**
 * A {@code KubeSchedulerConfiguration}, bare or embedded in a ConfigMap (the chart's {@code
 * hami-scheduler} ConfigMap carries it in {@code data["config.yaml"]}).
 *
 * @param profiles its profiles; one implicit {@code default-scheduler} profile when the
 *     configuration lists none
 * @param extenders its extenders, in order
 * @param document the configuration document (embedded documents carry the ConfigMap path as
 *     prefix)
 * @param path path of the configuration inside {@code document}; empty unless it is an item of a
 *     {@code List}
 */
public record SchedulerConfiguration(
    List<SchedulerProfile> profiles,
    List<SchedulerExtender> extenders,
    ManifestDocument document,
    String path) {

  /** Copies the lists. */
  public SchedulerConfiguration {
    profiles = List.copyOf(profiles);
    extenders = List.copyOf(extenders);
    Objects.requireNonNull(document, "document");
    Objects.requireNonNull(path, "path");
  }

  /**
   * @return the location of the configuration itself
   */
  public Location location() {
    return document.location(path);
  }
}
