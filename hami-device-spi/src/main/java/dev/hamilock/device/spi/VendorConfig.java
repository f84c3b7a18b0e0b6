package dev.hamilock.device.spi;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.Objects;
import java.util.Optional;

/**
 * Per-vendor configuration (HAMi device config file / chart {@code device-configmap.yaml}):
 * resource names and request defaults; {@link #of} gives HAMi's chart defaults.
 *
 * @param defaultMemory MiB given to a request without memory and percentage (0 = whole card)
 * @param defaultCores percent of a card given to a request without cores
 * @param defaultGpuNum device count added by admission when only memory/cores are given
 * @param memoryFactor multiplier applied to requested memory; &le; 1 means 1, as in HAMi
 */
public record VendorConfig(
    ResourceNames resourceNames,
    int defaultMemory,
    int defaultCores,
    int defaultGpuNum,
    int memoryFactor) {

  public VendorConfig {
    Objects.requireNonNull(resourceNames, "resourceNames");
    checkArgument(
        defaultMemory >= 0 && defaultCores >= 0 && defaultCores <= 100 && defaultGpuNum >= 0,
        "defaultMemory >= 0, defaultCores in 0..100, defaultGpuNum >= 0 required: %s, %s, %s",
        defaultMemory,
        defaultCores,
        defaultGpuNum);
    memoryFactor = Math.max(1, memoryFactor);
  }

  /**
   * HAMi's chart defaults (default memory 0 = whole card, default cores 0 %, one device, memory
   * factor 1) for {@code names}.
   *
   * @throws NullPointerException if {@code names} is null
   */
  public static VendorConfig of(ResourceNames names) {
    return new VendorConfig(names, 0, 0, 1, 1);
  }

  /**
   * {@link #of(ResourceNames)} for a count resource (e.g. {@code nvidia.com/gpu}) and a memory
   * resource in MiB (null for none).
   *
   * @throws IllegalArgumentException if a name is blank
   */
  public static VendorConfig of(String countResource, String memoryResource) {
    Optional<String> none = Optional.empty();
    return of(
        new ResourceNames(countResource, Optional.ofNullable(memoryResource), none, none, none));
  }
}
