package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.Values;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.ManifestObject;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * PF14 {@code dra-class-name-clash}: several DeviceClasses (distinct names) with one {@code
 * spec.extendedResourceName}. kube-scheduler maps an extended resource name to one class only: the
 * newest by {@code metadata.creationTimestamp}, equal timestamps broken by the lexicographically
 * lowest name (kubernetes {@code
 * staging/src/k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache/extendedresourcecache.go}
 * {@code updateResourceName2class}; k8s.io/api {@code resource/v1/types.go} documents the same on
 * {@code DeviceClassSpec.ExtendedResourceName}). The other classes' selectors and config never
 * apply to such requests, and which class wins depends on the order the classes were created in.
 * When every clashing class carries a {@code creationTimestamp} (manifests exported from a
 * cluster), the finding names the class used. Severity WARNING, one finding per clashing name at
 * the second class.
 */
public final class DraClassNameClashCheck extends AbstractCheck {

  /** Creates the check. */
  public DraClassNameClashCheck() {
    super(
        "PF14",
        "dra-class-name-clash",
        "One extendedResourceName per DeviceClass: kube-scheduler uses only the newest class.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    Map<String, Map<String, ManifestObject>> byResource = new LinkedHashMap<>();
    for (ManifestObject c : model.objects(Dra.GROUP, "DeviceClass")) {
      Values.string(Values.at(c.root(), "spec", "extendedResourceName"))
          .ifPresent(
              r ->
                  byResource
                      .computeIfAbsent(r, k -> new LinkedHashMap<>())
                      .putIfAbsent(c.name(), c));
    }
    List<Finding> out = new ArrayList<>();
    byResource.forEach(
        (resource, classes) -> {
          if (classes.size() < 2) {
            return;
          }
          List<ManifestObject> list = List.copyOf(classes.values());
          String used =
              newest(list)
                  .map(c -> "it uses " + c.name() + " (newest creationTimestamp)")
                  .orElse("which one depends on the order they are created in");
          out.add(
              finding(
                  Severity.WARNING,
                  list.get(1).location("spec.extendedResourceName"),
                  "DeviceClasses "
                      + String.join(", ", classes.keySet())
                      + " all map extended resource "
                      + resource
                      + ": kube-scheduler satisfies "
                      + resource
                      + " requests through only one class, the newest (equal timestamps: the"
                      + " lowest name) — "
                      + used
                      + "; the other classes' selectors and config are ignored for "
                      + resource
                      + ".",
                  "Keep spec.extendedResourceName: "
                      + resource
                      + " on one DeviceClass only (delete the old class once a migration is"
                      + " done)."));
        });
    return out;
  }

  /** The class kube-scheduler picks, when every class has a parsable creationTimestamp. */
  private static Optional<ManifestObject> newest(List<ManifestObject> classes) {
    Map<ManifestObject, Instant> created = new LinkedHashMap<>();
    for (ManifestObject c : classes) {
      Optional<String> ts = Values.string(Values.at(c.root(), "metadata", "creationTimestamp"));
      if (ts.isEmpty()) {
        return Optional.empty();
      }
      try {
        created.put(c, Instant.parse(ts.get()));
      } catch (DateTimeParseException e) {
        return Optional.empty();
      }
    }
    return classes.stream()
        .min(
            Comparator.comparing((ManifestObject c) -> created.get(c))
                .reversed()
                .thenComparing(ManifestObject::name));
  }
}
