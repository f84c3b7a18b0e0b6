package dev.hamilock.bind.cluster;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A JSON merge patch (RFC 7386) of a pod's annotations and labels, as HAMi writes its allocation
 * ({@code pkg/util/util.go} PatchPodAnnotations, spec §2.2 step 6): each entry sets a value or
 * removes the key ({@code Optional.empty()}, JSON {@code null}), in insertion order.
 *
 * @param expectedUid if present, the patch applies only to the pod incarnation with this {@code
 *     metadata.uid}; a different or missing incarnation ⇒ {@link ClusterException.Kind#NOT_FOUND}
 * @param expectedResourceVersion if present, the patch applies only while the pod's {@code
 *     metadata.resourceVersion} is this one (sent as {@code metadata.resourceVersion}: the API
 *     server treats it as a precondition, kubernetes#15416 and its test in kubernetes#15420), else
 *     {@link ClusterException.Kind#CONFLICT} (HTTP 409), nothing written
 */
public record MetadataPatch(
    Map<String, Optional<String>> annotations,
    Map<String, Optional<String>> labels,
    Optional<String> expectedUid,
    Optional<String> expectedResourceVersion) {

  /**
   * @throws NullPointerException naming the argument on null maps or expected UID
   * @throws IllegalArgumentException naming the argument on null or empty keys or null values, or a
   *     blank expected UID
   */
  public MetadataPatch {
    annotations = copy("annotations", annotations);
    labels = copy("labels", labels);
    Objects.requireNonNull(expectedUid, "expectedUid");
    checkArgument(
        expectedUid.isEmpty() || !expectedUid.get().isBlank(),
        "expectedUid must not be blank when present: \"%s\"",
        expectedUid.orElse(""));
    Objects.requireNonNull(expectedResourceVersion, "expectedResourceVersion");
  }

  private static Map<String, Optional<String>> copy(String what, Map<String, Optional<String>> m) {
    Objects.requireNonNull(m, what);
    Map<String, Optional<String>> out = new LinkedHashMap<>();
    m.forEach(
        (k, v) -> {
          checkArgument(
              k != null && !k.isEmpty() && v != null,
              "%s must not contain null or empty keys or null values: %s=%s",
              what,
              k,
              v);
          out.put(k, v);
        });
    return Collections.unmodifiableMap(out);
  }

  /** {@return a new, empty builder} */
  public static Builder builder() {
    return new Builder();
  }

  /** {@return this patch expecting {@code resourceVersion} instead} */
  public MetadataPatch at(String resourceVersion) {
    return new MetadataPatch(annotations, labels, expectedUid, Optional.of(resourceVersion));
  }

  /** {@return whether the patch changes nothing} */
  public boolean isEmpty() {
    return annotations.isEmpty() && labels.isEmpty();
  }

  /** Applies {@code changes} to a copy of {@code current}: every backend's merge semantics. */
  public static Map<String, String> apply(
      Map<String, String> current, Map<String, Optional<String>> changes) {
    Map<String, String> out = new LinkedHashMap<>(current);
    changes.forEach((k, v) -> v.ifPresentOrElse(x -> out.put(k, x), () -> out.remove(k)));
    return out;
  }

  /** Builder for {@link MetadataPatch}; not thread-safe. */
  public static final class Builder {
    private final Map<String, Optional<String>> annotations = new LinkedHashMap<>();
    private final Map<String, Optional<String>> labels = new LinkedHashMap<>();
    private Optional<String> expectedUid = Optional.empty();
    private Optional<String> expectedResourceVersion = Optional.empty();

    private Builder() {}

    public Builder setAnnotation(String key, String value) {
      annotations.put(key, Optional.of(value));
      return this;
    }

    public Builder removeAnnotation(String key) {
      annotations.put(key, Optional.empty());
      return this;
    }

    public Builder setLabel(String key, String value) {
      labels.put(key, Optional.of(value));
      return this;
    }

    public Builder removeLabel(String key) {
      labels.put(key, Optional.empty());
      return this;
    }

    /** The pod incarnation (UID) the patch is meant for; null or "" for any. */
    public Builder expectedUid(String uid) {
      this.expectedUid = Optional.ofNullable(uid).filter(u -> !u.isEmpty());
      return this;
    }

    /** The {@code metadata.resourceVersion} expected (compare-and-set); null or "" for any. */
    public Builder expectedResourceVersion(String resourceVersion) {
      this.expectedResourceVersion = Optional.ofNullable(resourceVersion).filter(v -> !v.isEmpty());
      return this;
    }

    /**
     * @throws IllegalArgumentException on null keys or values
     */
    public MetadataPatch build() {
      return new MetadataPatch(annotations, labels, expectedUid, expectedResourceVersion);
    }
  }
}
