package dev.hamilock.device.spi.usage;

import java.util.Objects;

/**
 * A bound pod whose {@code hami.io/vgpu-node} annotation names another node than its {@code
 * spec.nodeName} (volcano#5532: e.g. bound by another binder after HAMi's Filter chose a node). Its
 * usage counts on {@link #boundNode()} only.
 */
public record NodeMismatch(String podKey, String annotatedNode, String boundNode) {
  public NodeMismatch {
    Objects.requireNonNull(podKey, "podKey");
    Objects.requireNonNull(annotatedNode, "annotatedNode");
    Objects.requireNonNull(boundNode, "boundNode");
  }

  public String message() {
    return "pod %s is bound to node %s but hami.io/vgpu-node says %s: its device usage counts on %s only"
        .formatted(podKey, boundNode, annotatedNode, boundNode);
  }
}
