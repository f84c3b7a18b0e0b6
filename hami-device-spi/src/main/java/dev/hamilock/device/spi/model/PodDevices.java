package dev.hamilock.device.spi.model;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A pod's device allocation (HAMi {@code PodDevices}): vendor CommonWord to one device list per
 * container (init containers first; empty when it requested none), only vendors the pod requests.
 */
public record PodDevices(Map<String, List<List<ContainerDevice>>> byVendor) {

  public PodDevices {
    Map<String, List<List<ContainerDevice>>> copy = new LinkedHashMap<>();
    Objects.requireNonNull(byVendor, "byVendor")
        .forEach(
            (k, v) -> copy.put(Objects.requireNonNull(k), v.stream().map(List::copyOf).toList()));
    byVendor = java.util.Collections.unmodifiableMap(copy);
  }

  public static PodDevices empty() {
    return new PodDevices(Map.of());
  }

  /** A vendor's per-container lists, empty when absent. */
  public List<List<ContainerDevice>> forVendor(String vendor) {
    return byVendor.getOrDefault(vendor, List.of());
  }

  public boolean isEmpty() {
    return byVendor.isEmpty();
  }
}
