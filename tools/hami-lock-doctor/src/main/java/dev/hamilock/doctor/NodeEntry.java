package dev.hamilock.doctor;

import java.util.List;
import java.util.Optional;

/**
 * One node: its HAMi registration summary (from the SPI's registration codecs and usage
 * reconstruction) and its lock annotations.
 *
 * @param node the node name
 * @param gpus registered devices (all vendors)
 * @param usedMemMiB device memory in use by pods' allocations and allocated ResourceClaims, MiB
 * @param totalMemMiB registered device memory, MiB
 * @param usedCores compute in use, % of a card summed over devices
 * @param totalCores registered compute, % of a card summed over devices
 * @param registration a registration or usage problem (undecodable annotation, undecodable pod), if
 *     any
 * @param dra per card, what allocated {@code resource.k8s.io/v1} ResourceClaims add to its usage
 *     (issue 28), e.g. {@code GPU-a, DRA claims (8192 MiB, 0 %, 1 slot)}; empty without any
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
    List<String> dra,
    List<LockEntry> locks) {

  /** Copies the lists. */
  public NodeEntry {
    dra = List.copyOf(dra);
    locks = List.copyOf(locks);
  }
}
