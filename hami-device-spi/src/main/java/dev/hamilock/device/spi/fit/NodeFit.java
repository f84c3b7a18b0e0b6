package dev.hamilock.device.spi.fit;

import dev.hamilock.device.spi.model.PodDevices;
import java.util.Objects;

/**
 * Result of fitting a whole pod on one node.
 *
 * @param devices the allocation per vendor and container; empty on failure
 * @param score node score (§5.9: pre-pod base score plus vendor scores); 0 on failure
 * @param reason failure reason (e.g. {@code 1/2 CardInsufficientMemory}); "" on success
 */
public record NodeFit(
    String nodeName, boolean fits, PodDevices devices, double score, String reason) {
  public NodeFit {
    Objects.requireNonNull(nodeName, "nodeName");
    Objects.requireNonNull(devices, "devices");
    Objects.requireNonNull(reason, "reason");
  }

  static NodeFit failure(String node, String reason) {
    return new NodeFit(node, false, PodDevices.empty(), 0, reason);
  }
}
