package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.device.spi.model.ContainerDevice;
import java.util.List;

/**
 * What the device-plugin hand-off gave one container: the devices of its to-allocate entry, exactly
 * as the scheduler wrote them (uuid, vendor type, device memory in MiB, cores in percent of a card)
 * — the values a device plugin turns into {@code CUDA_DEVICE_MEMORY_LIMIT_<i>=<MiB>m} and {@code
 * CUDA_DEVICE_SM_LIMIT=<cores>} (HAMi {@code plugin/server.go} Allocate).
 *
 * @param containerIndex index in the pod's allocation (init containers first, then regular)
 * @param devices the devices, in annotation order
 */
public record ContainerAllocation(int containerIndex, List<ContainerDevice> devices) {

  /** Validates and copies. @throws IllegalArgumentException for a negative index */
  public ContainerAllocation {
    checkArgument(containerIndex >= 0, "containerIndex must not be negative: %s", containerIndex);
    devices = List.copyOf(devices);
  }

  /** {@return the device UUIDs, in order} */
  public List<String> uuids() {
    return devices.stream().map(ContainerDevice::uuid).toList();
  }
}
