package dev.hamilock.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One committed write to one object, as kept by {@link ApiServerEmulator#history}. No-op writes
 * (which the apiserver does not persist) are not recorded.
 *
 * @param resourceVersion the revision this write produced (the object's {@code
 *     metadata.resourceVersion} afterwards; for a delete, the deletion revision)
 * @param verb the Kubernetes verb that caused it: {@code create}, {@code update}, {@code patch},
 *     {@code delete}, or {@code seed}/{@code mutate} for writes made through the Java seeding API
 * @param subresource {@code ""}, {@code status} or {@code binding}
 * @param eventType the watch event it produced: {@code ADDED}, {@code MODIFIED} or {@code DELETED}
 * @param timestamp when it was committed, from the emulator's clock
 * @param object the object after the write (for a delete: its last state); a private copy
 */
public record WriteRecord(
    long resourceVersion,
    String verb,
    String subresource,
    String eventType,
    Instant timestamp,
    JsonNode object) {

  /** Validates that no component is null. */
  public WriteRecord {
    Objects.requireNonNull(verb, "verb");
    Objects.requireNonNull(subresource, "subresource");
    Objects.requireNonNull(eventType, "eventType");
    Objects.requireNonNull(timestamp, "timestamp");
    Objects.requireNonNull(object, "object");
  }

  /**
   * @return {@code metadata.annotations} of {@link #object()} (empty when absent),
   *     insertion-ordered
   */
  public Map<String, String> annotations() {
    return stringMap(object.path("metadata").path("annotations"));
  }

  /**
   * @return {@code metadata.labels} of {@link #object()} (empty when absent)
   */
  public Map<String, String> labels() {
    return stringMap(object.path("metadata").path("labels"));
  }

  private static Map<String, String> stringMap(JsonNode node) {
    Map<String, String> out = new LinkedHashMap<>();
    node.properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }
}
