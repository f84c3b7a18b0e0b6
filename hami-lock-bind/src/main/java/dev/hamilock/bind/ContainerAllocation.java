package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.device.spi.model.ContainerDevice;
import java.util.List;

/**
 * What the device-plugin hand-off gave one container: its to-allocate entry as written (memory in
 * MiB, cores in % of a card: HAMi {@code plugin/server.go} Allocate's {@code
 * CUDA_DEVICE_MEMORY_LIMIT_<i>}, {@code CUDA_DEVICE_SM_LIMIT}).
 *
 * @param containerIndex index in the pod's allocation (init containers first, then regular)
 */
public record ContainerAllocation(int containerIndex, List<ContainerDevice> devices) {

  /**
   * @throws IllegalArgumentException for a negative index
   */
  public ContainerAllocation {
    checkArgument(containerIndex >= 0, "containerIndex must not be negative: %s", containerIndex);
    devices = List.copyOf(devices);
  }

  /** {@return the device UUIDs, in order} */
  public List<String> uuids() {
    return devices.stream().map(ContainerDevice::uuid).toList();
  }
}
