package dev.hamilock.device.spi;

import java.util.Objects;

/**
 * A pod annotation whose value is not an accepted word ({@link PolicyValues}), logged at WARN and
 * carried in the flows' results (e.g. for an Event).
 *
 * @param accepted what would have been accepted, e.g. {@code a comma list of binpack, spread, …}
 * @param effect what applies instead, e.g. {@code configured default "binpack" used}
 */
public record AnnotationWarning(
    String podKey, String annotation, String value, String accepted, String effect) {

  public AnnotationWarning {
    Objects.requireNonNull(podKey, "podKey");
    Objects.requireNonNull(annotation, "annotation");
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(accepted, "accepted");
    Objects.requireNonNull(effect, "effect");
  }

  /** One line: pod, annotation, value, accepted words and effect. */
  public String message() {
    return "pod %s: ignoring unrecognized %s=\"%s\" (accepted: %s); %s"
        .formatted(podKey, annotation, value, accepted, effect);
  }
}
