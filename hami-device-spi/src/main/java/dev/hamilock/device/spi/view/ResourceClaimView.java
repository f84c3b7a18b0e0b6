package dev.hamilock.device.spi.view;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The parts of a {@code resource.k8s.io/v1} ResourceClaim the device layer reads to count DRA
 * allocations as usage ({@code k8s.io/api} {@code resource/v1/types.go} {@code AllocationResult},
 * {@code DeviceRequestAllocationResult}). {@code status.reservedFor} is not read: kube-scheduler
 * counts an allocated claim's devices as taken either way.
 *
 * @param allocated whether {@code status.allocation} is set
 * @param allocationNode the one node {@code status.allocation.nodeSelector} names (the single
 *     {@code matchFields} term {@code metadata.name In [node]} kube-scheduler's allocator writes
 *     for node-local devices), "" otherwise
 * @param results {@code status.allocation.devices.results}, immutable
 */
public record ResourceClaimView(
    String namespace,
    String name,
    String uid,
    boolean allocated,
    String allocationNode,
    List<Result> results) {

  public ResourceClaimView {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(allocationNode, "allocationNode");
    results = List.copyOf(results);
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
