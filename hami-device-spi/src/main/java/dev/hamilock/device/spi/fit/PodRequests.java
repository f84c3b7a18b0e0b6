package dev.hamilock.device.spi.fit;

import dev.hamilock.device.spi.AnnotationWarning;
import dev.hamilock.device.spi.GpuPolicy;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.view.ContainerRole;
import dev.hamilock.device.spi.view.PodView;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A pod's parsed device requests and scheduling options, reused for every candidate node.
 *
 * @param perContainer per container (init first): vendor CommonWord to request with Nums &gt; 0
 * @param gpuPolicy device policy ({@code hami.io/gpu-scheduler-policy} or the default)
 * @param nodePolicy node policy ({@code hami.io/node-scheduler-policy} or the default)
 * @param numaBind whether {@code nvidia.com/numa-bind} is true (drives the NUMA sort)
 * @param warnings annotations whose values were not accepted words and were ignored ({@link
 *     dev.hamilock.device.spi.PolicyValues}), in annotation-key order
 */
public record PodRequests(
    PodView pod,
    List<Map<String, ContainerDeviceRequest>> perContainer,
    GpuPolicy gpuPolicy,
    String nodePolicy,
    ScoringWeights weights,
    boolean numaBind,
    List<AnnotationWarning> warnings) {

  public PodRequests {
    warnings = List.copyOf(warnings);
    Objects.requireNonNull(pod, "pod");
    perContainer =
        perContainer.stream()
            .map(m -> Collections.unmodifiableMap(new LinkedHashMap<>(m)))
            .toList();
    Objects.requireNonNull(gpuPolicy, "gpuPolicy");
    Objects.requireNonNull(nodePolicy, "nodePolicy");
    Objects.requireNonNull(weights, "weights");
  }

  /** One role per entry of {@link #perContainer()} ({@link PodView#containerRoles()}). */
  public List<ContainerRole> roles() {
    return pod.containerRoles();
  }

  /**
   * These requests without the given vendors' entries (CommonWords), e.g. those kube-scheduler gave
   * through DRA ({@link dev.hamilock.device.spi.VendorRegistry#viaDra}); this when none is present.
   */
  public PodRequests without(Set<String> vendors) {
    if (perContainer.stream().noneMatch(m -> vendors.stream().anyMatch(m::containsKey))) {
      return this;
    }
    List<Map<String, ContainerDeviceRequest>> kept =
        perContainer.stream()
            .map(
                m -> {
                  Map<String, ContainerDeviceRequest> c = new LinkedHashMap<>(m);
                  c.keySet().removeAll(vendors);
                  return c;
                })
            .toList();
    return new PodRequests(pod, kept, gpuPolicy, nodePolicy, weights, numaBind, warnings);
  }

  /** Whether any container requests any device (else HAMi's Filter passes all nodes). */
  public boolean requestsDevices() {
    return perContainer.stream().anyMatch(m -> !m.isEmpty());
  }
}
