package dev.hamilock.device.spi;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.Objects;
import java.util.Optional;

/**
 * Per-vendor configuration (HAMi device config file / chart {@code device-configmap.yaml}):
 * resource names and request defaults; {@link #builder(String)} gives HAMi's chart defaults.
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

  /** A builder for a count resource (e.g. {@code nvidia.com/gpu}) with HAMi's chart defaults. */
  public static Builder builder(String countResource) {
    return new Builder(countResource);
  }

  /** Builder of the resource names (null for none); the defaults are HAMi's chart defaults. */
  public static final class Builder {
    private final String count;
    private String memory;
    private String memoryPercentage;
    private String cores;
    private String priority;

    private Builder(String count) {
      this.count = count;
    }

    public Builder memoryResource(String v) {
      this.memory = v;
      return this;
    }

    public Builder memoryPercentageResource(String v) {
      this.memoryPercentage = v;
      return this;
    }

    public Builder coresResource(String v) {
      this.cores = v;
      return this;
    }

    public Builder priorityResource(String v) {
      this.priority = v;
      return this;
    }

    /**
     * @throws IllegalArgumentException naming the invalid setting
     */
    public VendorConfig build() {
      return new VendorConfig(
          new ResourceNames(
              count,
              Optional.ofNullable(memory),
              Optional.ofNullable(memoryPercentage),
              Optional.ofNullable(cores),
              Optional.ofNullable(priority)),
          0,
          0,
          1,
          1);
    }
  }
}
