package dev.hamilock.device.spi.view;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The parts of a {@code resource.k8s.io/v1} ResourceClaim read to count DRA allocations as usage
 * ({@code resource/v1/types.go} {@code AllocationResult}) and to check that a claim is allocated
 * and reserved for a pod ({@code reservedFor}; usage counts an allocation whoever it is reserved
 * for).
 *
 * @param allocated whether {@code status.allocation} is set
 * @param allocationNode the node of a single {@code matchFields metadata.name In [node]} term of
 *     {@code status.allocation.nodeSelector}, else ""
 * @param results {@code status.allocation.devices.results}, immutable
 * @param reservedFor the {@code uid}s of {@code status.reservedFor[]} ({@code
 *     ResourceClaimConsumerReference}: the pods, or other consumers, the claim is reserved for),
 *     immutable
 */
public record ResourceClaimView(
    String namespace,
    String name,
    String uid,
    boolean allocated,
    String allocationNode,
    List<Result> results,
    Set<String> reservedFor) {

  public ResourceClaimView {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(allocationNode, "allocationNode");
    results = List.copyOf(results);
    reservedFor = Set.copyOf(reservedFor);
  }

  public String key() {
    return namespace + "/" + name;
  }

  /**
   * @param shareId {@code shareID}: set when this is one share of a shareable device
   * @param consumedCapacity capacity name to the amount this share consumes (exact; {@code memory}
   *     in bytes), immutable
   * @param adminAccess {@code adminAccess}: such a result is not an allocation (kube-scheduler's
   *     {@code foreachAllocatedDevice} skips it)
   */
  public record Result(
      String driver,
      String pool,
      String device,
      Optional<String> shareId,
      Map<String, BigDecimal> consumedCapacity,
      boolean adminAccess) {
    public Result {
      Objects.requireNonNull(driver, "driver");
      Objects.requireNonNull(pool, "pool");
      Objects.requireNonNull(device, "device");
      Objects.requireNonNull(shareId, "shareId");
      consumedCapacity = Map.copyOf(consumedCapacity);
    }
  }
}
