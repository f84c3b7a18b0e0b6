package dev.hamilock.device.spi;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How a DRA driver's ResourceSlice devices map to the cards a vendor registers; names match bare or
 * prefixed with the driver ({@code gpu.nvidia.com/uuid}, {@code resource/v1} {@code
 * QualifiedName}).
 *
 * @param driver the driver name ({@code ResourceSlice.spec.driver}), e.g. {@code gpu.nvidia.com}
 * @param uuidAttribute attribute holding the card UUID (the registration's {@code id}), e.g. {@code
 *     uuid}
 * @param parentUuidAttribute attribute holding the parent card UUID of a partition (e.g. {@code
 *     parentUUID} on MIG devices); when a device has it, the allocation takes the whole parent card
 * @param memoryCapacity capacity name of device memory in bytes (e.g. {@code memory}) in a shared
 *     allocation's {@code consumedCapacity}
 * @param coresCapacity capacity name of compute in percent of one card (e.g. {@code cores}); when
 *     absent, a shared allocation's cores are taken in proportion to its memory
 */
public record DraDriver(
    String driver,
    String uuidAttribute,
    Optional<String> parentUuidAttribute,
    Optional<String> memoryCapacity,
    Optional<String> coresCapacity) {

  /**
   * @throws IllegalArgumentException naming the value when the driver or attribute name is blank
   */
  public DraDriver {
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(uuidAttribute, "uuidAttribute");
    Objects.requireNonNull(parentUuidAttribute, "parentUuidAttribute");
    Objects.requireNonNull(memoryCapacity, "memoryCapacity");
    Objects.requireNonNull(coresCapacity, "coresCapacity");
    checkArgument(!driver.isBlank(), "DRA driver name must not be blank: \"%s\"", driver);
    checkArgument(
        !uuidAttribute.isBlank(),
        "uuid attribute of %s must not be blank: \"%s\"",
        driver,
        uuidAttribute);
  }

  /** The value under the bare or the driver-prefixed spelling of {@code name}; null when absent. */
  public <V> V value(Map<String, V> byName, String name) {
    String bare = name.startsWith(driver + "/") ? name.substring(driver.length() + 1) : name;
    V v = byName.get(bare);
    return v != null ? v : byName.get(driver + "/" + bare);
  }
}
