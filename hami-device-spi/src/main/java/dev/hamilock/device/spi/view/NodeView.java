package dev.hamilock.device.spi.view;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Objects;

/**
 * The parts of a Kubernetes Node the device layer reads: name, labels, annotations (registration,
 * cordon, pair scores, lock) and {@code status.allocatable} as exact quantities.
 */
public record NodeView(
    String name,
    Map<String, String> labels,
    Map<String, String> annotations,
    Map<String, BigDecimal> allocatable) {

  public NodeView {
    Objects.requireNonNull(name, "name");
    labels = labels == null ? Map.of() : Map.copyOf(labels);
    annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
    allocatable = allocatable == null ? Map.of() : Map.copyOf(allocatable);
  }

  /** A node with only a name and annotations (tests, simulations). */
  public static NodeView of(String name, Map<String, String> annotations) {
    return new NodeView(name, Map.of(), annotations, Map.of());
  }
}
