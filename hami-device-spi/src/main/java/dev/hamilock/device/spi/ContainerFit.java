package dev.hamilock.device.spi;

import dev.hamilock.device.spi.model.ContainerDevice;
import java.util.List;
import java.util.Objects;

/**
 * Result of fitting one container request on one node (HAMi Fit's {@code (fit, devices, reason)}).
 *
 * @param devices chosen devices (empty on failure), in choice order
 * @param reason on failure HAMi's reason text ({@code 1/1 CardInsufficientMemory}); "" on success
 */
public record ContainerFit(boolean fits, List<ContainerDevice> devices, String reason) {
  public ContainerFit {
    devices = List.copyOf(devices);
    Objects.requireNonNull(reason, "reason");
  }

  public static ContainerFit success(List<ContainerDevice> devices) {
    return new ContainerFit(true, devices, "");
  }

  public static ContainerFit failure(String reason) {
    return new ContainerFit(false, List.of(), reason);
  }
}
