package dev.hamilock.device.spi.model;

import java.util.Objects;

/**
 * One device slice given to one container (HAMi {@code ContainerDevice}); on the wire {@code
 * uuid,type,usedmem,usedcores}.
 *
 * @param index device index on the node (not on the wire; 0 after decoding)
 * @param type vendor CommonWord, e.g. {@code NVIDIA} (not the model text)
 * @param usedmem device memory in MiB
 * @param usedcores compute share in percent of one card
 * @param slots split slots this entry occupies: 0 on raw (decoded) entries, &ge; 1 after the usage
 *     collapse of {@code pkg/device/initContainer.go}
 */
public record ContainerDevice(
    int index, String uuid, String type, int usedmem, int usedcores, int slots) {
  public ContainerDevice {
    Objects.requireNonNull(uuid, "uuid");
    Objects.requireNonNull(type, "type");
  }

  /** A raw entry: index 0, slots 0. */
  public static ContainerDevice of(String uuid, String type, int usedmem, int usedcores) {
    return new ContainerDevice(0, uuid, type, usedmem, usedcores, 0);
  }
}
