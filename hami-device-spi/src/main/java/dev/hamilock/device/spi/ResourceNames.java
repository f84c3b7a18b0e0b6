package dev.hamilock.device.spi;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Extended-resource names of one vendor (HAMi {@code ResourceNames}; NVIDIA defaults {@code
 * nvidia.com/gpu}, {@code nvidia.com/gpumem}, {@code nvidia.com/gpumem-percentage}, {@code
 * nvidia.com/gpucores}, {@code nvidia.com/priority}).
 *
 * @param memory device memory resource in MiB (× memoryFactor), empty if the vendor has none
 * @param memoryPercentage memory as percent of a device, empty if none
 * @param cores compute as percent of one card, empty if none
 * @param priority task priority resource, empty if none
 */
public record ResourceNames(
    String count,
    Optional<String> memory,
    Optional<String> memoryPercentage,
    Optional<String> cores,
    Optional<String> priority) {

  /**
   * @throws IllegalArgumentException if a name is blank
   */
  public ResourceNames {
    requireNonBlank(count, "count resource name");
    for (Optional<String> o : List.of(memory, memoryPercentage, cores, priority)) {
      Objects.requireNonNull(o, "resource name")
          .ifPresent(n -> requireNonBlank(n, "resource name"));
    }
  }

  private static void requireNonBlank(String value, String name) {
    checkArgument(
        !Objects.requireNonNull(value, name).isBlank(),
        "%s must not be blank: \"%s\"",
        name,
        value);
  }

  /** Every configured name, count first. */
  public List<String> all() {
    return Stream.concat(
            Stream.of(count),
            Stream.of(memory, memoryPercentage, cores, priority).flatMap(Optional::stream))
        .toList();
  }
}
