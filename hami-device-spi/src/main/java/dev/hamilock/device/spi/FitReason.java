package dev.hamilock.device.spi;

/**
 * HAMi's per-card fit failure words ({@code pkg/device/common/common.go}); {@link #word()} is the
 * wire text used in {@code <count>/<cards> <Reason>} reasons.
 */
public enum FitReason {
  /** Card type or mode selector excluded the card, or the request is for another vendor. */
  CARD_TYPE_MISMATCH("CardTypeMismatch"),
  /** {@code use-gpuuuid}/{@code nouse-gpuuuid} excluded the card. */
  CARD_UUID_MISMATCH("CardUuidMismatch"),
  /** All split slots of the card are in use. */
  CARD_TIME_SLICING_EXHAUSTED("CardTimeSlicingExhausted"),
  /** All compute of the card is in use and the request asks for 0 cores. */
  CARD_COMPUTE_UNITS_EXHAUSTED("CardComputeUnitsExhausted"),
  /** Remaining device memory below the request. */
  CARD_INSUFFICIENT_MEMORY("CardInsufficientMemory"),
  /** Remaining compute below the request. */
  CARD_INSUFFICIENT_CORE("CardInsufficientCore"),
  /** Card unhealthy. */
  CARD_NOT_HEALTH("CardNotHealth"),
  /** Card listed in {@code hami.io/device-cordon}. */
  CARD_CORDONED("CardCordoned"),
  /** numa-bind could not gather the devices on one NUMA node. */
  NUMA_NOT_FIT("NumaNotFit"),
  /** Exclusive use (cores 100 or mutex policy) conflicts with existing use. */
  EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT("ExclusiveDeviceAllocateConflict"),
  /** MIG: no free placement for the request (this library does not place MIG slices yet). */
  CARD_MIG_TOPOLOGY_INFEASIBLE("CardMigTopologyInfeasible"),
  /** Fewer vendor devices on the node than requested. */
  NODE_INSUFFICIENT_DEVICE("NodeInsufficientDevice"),
  /** Some but not enough cards fit. */
  ALLOCATED_CARDS_INSUFFICIENT_REQUEST("AllocatedCardsInsufficientRequest"),
  /** Generic node-level no-fit. */
  NODE_UNFIT_POD("NodeUnfitPod");

  private final String word;

  FitReason(String word) {
    this.word = word;
  }

  /** HAMi's wire word, e.g. {@code CardInsufficientMemory}. */
  public String word() {
    return word;
  }
}
