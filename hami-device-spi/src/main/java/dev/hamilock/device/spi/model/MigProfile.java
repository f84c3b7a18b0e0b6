package dev.hamilock.device.spi.model;

import java.util.List;
import java.util.Objects;

/**
 * A MIG profile a GPU can host (HAMi {@code MigProfile}, {@code pkg/device/devices.go}); on the
 * wire {@code {"name","memoryMB","core","sliceCount","placements":[{"start","size"}]}} — {@code
 * instanceCount} is read but never written (V40).
 *
 * @param name profile name, e.g. {@code 1g.5gb}
 * @param memoryMb memory of one instance in MiB
 * @param core compute share (percent of the card)
 * @param sliceCount memory slices one instance uses
 * @param instanceCount maximum instances (not serialized by HAMi)
 */
public record MigProfile(
    String name,
    int memoryMb,
    int core,
    int sliceCount,
    int instanceCount,
    List<MigPlacement> placements) {
  public MigProfile {
    Objects.requireNonNull(name, "name");
    placements = List.copyOf(Objects.requireNonNull(placements, "placements"));
  }
}
