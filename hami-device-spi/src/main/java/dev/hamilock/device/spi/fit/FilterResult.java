package dev.hamilock.device.spi.fit;

import dev.hamilock.device.spi.AnnotationWarning;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Result of fitting a pod across candidate nodes (HAMi extender Filter semantics, spec §2.2).
 *
 * @param devicesRequested false when no container requests a device (every candidate passes)
 * @param best the chosen node's fit ({@link PodFitter}), empty when none fits or none requested
 * @param passed names of the nodes that fit (all when nothing was requested), in candidate order
 * @param failedNodes node name to failure reason, sorted by node name
 * @param warnings pod annotations ignored as unknown words ({@link PodRequests#warnings()})
 */
public record FilterResult(
    boolean devicesRequested,
    Optional<NodeFit> best,
    List<String> passed,
    Map<String, String> failedNodes,
    List<AnnotationWarning> warnings) {

  public FilterResult {
    warnings = List.copyOf(warnings);
    Objects.requireNonNull(best, "best");
    passed = List.copyOf(passed);
    failedNodes = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(failedNodes));
  }

  public Optional<String> bestNode() {
    return best.map(NodeFit::nodeName);
  }
}
