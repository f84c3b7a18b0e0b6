package dev.hamilock.bind;

import dev.hamilock.device.spi.AnnotationWarning;
import dev.hamilock.device.spi.model.PodDevices;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the extender filter decided for one pod (HAMi {@code Filter}, spec §2.2): exactly one node,
 * or none with a reason per candidate node.
 *
 * @param devicesRequested false when no container requests a device: every candidate passes and
 *     nothing is chosen or written (HAMi returns all candidates unchanged)
 * @param node the chosen node (highest score under {@code binpack}, lowest under {@code spread},
 *     ties to the smallest name); empty if nothing fits or nothing was requested
 * @param devices the allocation on the chosen node (one entry per container and vendor)
 * @param score the chosen node's score (HAMi §5.9); 0 if none
 * @param passedNodes the candidates that fit, in candidate order
 * @param failedNodes candidate name to HAMi's reason ({@code 1/2 CardInsufficientMemory}, {@code
 *     NodeInsufficientDevice}, {@code node unregistered}, {@code node usage unknown: …}, {@code
 *     node not found}), sorted by name
 * @param annotated whether the Filter annotations were written to the pod
 * @param warnings pod annotations ignored as unknown words (e.g. {@code
 *     hami.io/gpu-scheduler-policy: binpak}), logged at WARN and recorded as Warning Events (reason
 *     {@code IgnoredAnnotation}) by a writing {@link ExtenderFilter#filter}
 * @param failure why the filter could not decide: then {@code devicesRequested} is true and nothing
 *     passed, so a caller that ignores the failure lets no candidate through
 */
public record FilterDecision(
    boolean devicesRequested,
    Optional<String> node,
    Optional<PodDevices> devices,
    double score,
    List<String> passedNodes,
    Map<String, String> failedNodes,
    boolean annotated,
    List<AnnotationWarning> warnings,
    Optional<FlowFailure> failure) {

  /** {@return a failed decision: no node, nothing passed, no per-node reasons} */
  public static FilterDecision failed(FlowFailure failure) {
    return new FilterDecision(
        true,
        Optional.empty(),
        Optional.empty(),
        0,
        List.of(),
        Map.of(),
        false,
        List.of(),
        Optional.of(Objects.requireNonNull(failure, "failure")));
  }

  /**
   * @throws NullPointerException if a component is null
   */
  public FilterDecision {
    warnings = List.copyOf(warnings);
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(devices, "devices");
    passedNodes = List.copyOf(passedNodes);
    failedNodes = Collections.unmodifiableMap(new TreeMap<>(failedNodes));
    Objects.requireNonNull(failure, "failure");
  }

  /** {@return a copy with {@link #annotated()} true} */
  FilterDecision withAnnotated() {
    return new FilterDecision(
        devicesRequested, node, devices, score, passedNodes, failedNodes, true, warnings, failure);
  }
}
