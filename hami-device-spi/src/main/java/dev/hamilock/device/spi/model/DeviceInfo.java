package dev.hamilock.device.spi.model;

import static com.google.common.base.Preconditions.checkArgument;

import java.util.List;
import java.util.Objects;

/**
 * One device as a node registers it (HAMi {@code DeviceInfo}, {@code pkg/device/devices.go}).
 *
 * @param id device UUID, e.g. {@code GPU-ebe7c3f7-303d-558d-435e-99a160631fe4}
 * @param index device index on the node (&ge; 0)
 * @param count split count: how many containers may share it (slots)
 * @param devmem device memory in MiB (after the plugin's memory scaling)
 * @param devcore compute capacity, 100 = one full card (after core scaling)
 * @param type model text, e.g. {@code NVIDIA-Tesla P4}
 * @param mode operating mode, e.g. {@code hami-core}, {@code mig}, {@code mps}, or ""
 * @param migProfiles MIG profiles (MIG mode only), immutable
 * @param vendor the vendor CommonWord that decoded it (set by the decoder, not on the wire)
 */
public record DeviceInfo(
    String id,
    int index,
    int count,
    int devmem,
    int devcore,
    String type,
    int numa,
    String mode,
    List<MigProfile> migProfiles,
    boolean health,
    String vendor) {
  public DeviceInfo {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(vendor, "vendor");
    migProfiles = List.copyOf(Objects.requireNonNull(migProfiles, "migProfiles"));
    checkArgument(index >= 0, "index must not be negative: %s", index);
  }
}
