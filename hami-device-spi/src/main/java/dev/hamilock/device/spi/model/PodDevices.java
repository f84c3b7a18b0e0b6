package dev.hamilock.device.spi.model;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A pod's device allocation (HAMi {@code PodDevices}): vendor CommonWord to one entry per
 * container, init containers first, then regular containers; an entry is the list of devices that
 * container got from that vendor (empty when it requested none). Only vendors the pod requests
 * appear.
 *
 * @param byVendor vendor to per-container device lists, immutable, insertion order kept
 */
public record PodDevices(Map<String, List<List<ContainerDevice>>> byVendor) {

  public PodDevices {
    Map<String, List<List<ContainerDevice>>> copy = new LinkedHashMap<>();
    Objects.requireNonNull(byVendor, "byVendor")
        .forEach(
            (k, v) -> copy.put(Objects.requireNonNull(k), v.stream().map(List::copyOf).toList()));
    byVendor = java.util.Collections.unmodifiableMap(copy);
  }

  /** An allocation with no vendors. */
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
