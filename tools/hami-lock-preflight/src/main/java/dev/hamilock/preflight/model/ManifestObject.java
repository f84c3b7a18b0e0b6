package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.Values;
import dev.hamilock.preflight.manifest.YamlPath;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One Kubernetes object of the input as written (a document, or an item of a {@code kind: List}),
 * for checks that read objects the model does not derive anything from (DeviceClasses,
 * ResourceSlices, MutatingWebhookConfigurations, Nodes, Namespaces).
 *
 * @param group the API group of {@code apiVersion} ({@code ""} for the core group)
 * @param kind {@code kind}
 * @param root the object's mapping
 * @param path path of the object inside {@code document}; empty unless it is an item of a {@code
 *     List}
 * @param document the document holding it
 */
public record ManifestObject(
    String group, String kind, Map<String, Object> root, String path, ManifestDocument document) {

  /** Validates non-null components. */
  public ManifestObject {
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(root, "root");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(document, "document");
  }

  /**
   * @return {@code metadata.name}, or {@code ""}
   */
  public String name() {
    return Values.string(Values.at(root, "metadata", "name")).orElse("");
  }

  /**
   * @return {@code metadata.namespace}, when written
   */
  public Optional<String> namespace() {
    return Values.string(Values.at(root, "metadata", "namespace"));
  }

  /**
   * @return {@code metadata.labels} (string values only)
   */
  public Map<String, String> labels() {
    return Values.stringMap(Values.at(root, "metadata", "labels"));
  }

  /**
   * @return {@code metadata.annotations} (string values only)
   */
  public Map<String, String> annotations() {
    return Values.stringMap(Values.at(root, "metadata", "annotations"));
  }

  /**
   * @param relative a path below the object, e.g. {@code spec.extendedResourceName}
   * @return its location
   */
  public Location location(String relative) {
    return document.location(YamlPath.join(path, relative));
  }

  /**
   * @return e.g. {@code DeviceClass gpu.nvidia.com}
   */
  public String describe() {
    return kind + " " + namespace().map(ns -> ns + "/").orElse("") + name();
  }
}
