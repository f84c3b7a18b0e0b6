package dev.hamilock.device.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Extended-resource names of one vendor (HAMi {@code ResourceNames}; NVIDIA defaults
 * {@code nvidia.com/gpu}, {@code nvidia.com/gpumem}, {@code nvidia.com/gpumem-percentage},
 * {@code nvidia.com/gpucores}, {@code nvidia.com/priority}).
 *
 * @param count device count resource (required)
 * @param memory device memory resource in MiB (× memoryFactor), empty if the vendor has none
 * @param memoryPercentage memory as percent of a device, empty if none
 * @param cores compute as percent of one card, empty if none
 * @param priority task priority resource, empty if none
 */
public record ResourceNames(
    String count, Optional<String> memory, Optional<String> memoryPercentage,
    Optional<String> cores, Optional<String> priority) {

  /** Validates: count non-blank, optional names non-blank when present. */
  public ResourceNames {
    if (count == null || count.isBlank()) {
      throw new IllegalArgumentException("count resource name must not be blank");
    }
    for (Optional<String> o : List.of(memory, memoryPercentage, cores, priority)) {
      if (Objects.requireNonNull(o, "resource name").map(String::isBlank).orElse(false)) {
        throw new IllegalArgumentException("resource names must not be blank");
      }
    }
  }

  /** @return every configured name, count first */
  public List<String> all() {
    List<String> out = new ArrayList<>(5);
    out.add(count);
    memory.ifPresent(out::add);
    memoryPercentage.ifPresent(out::add);
    cores.ifPresent(out::add);
    priority.ifPresent(out::add);
    return out;
  }
}
