package dev.hamilock.doctor;

import java.util.List;
import java.util.Optional;

/**
 * One node: its HAMi registration summary (from the SPI's registration codecs and usage
 * reconstruction) and its lock annotations.
 *
 * @param node the node name
 * @param gpus registered devices (all vendors)
 * @param usedMemMiB device memory in use by pods' allocations, MiB
 * @param totalMemMiB registered device memory, MiB
 * @param usedCores compute in use, % of a card summed over devices
 * @param totalCores registered compute, % of a card summed over devices
 * @param registration a registration or usage problem (undecodable annotation, undecodable pod), if
 *     any
 * @param locks every lock annotation present, by key
 */
public record NodeEntry(
    String node,
    int gpus,
    long usedMemMiB,
    long totalMemMiB,
    long usedCores,
    long totalCores,
    Optional<String> registration,
    List<LockEntry> locks) {

  /** Copies the list. */
  public NodeEntry {
    locks = List.copyOf(locks);
  }
}
