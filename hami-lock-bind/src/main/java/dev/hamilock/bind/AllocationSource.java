package dev.hamilock.bind;

/** Where the allocation a {@link PodBinder} wrote came from. */
public enum AllocationSource {
  /** No allocation: the pod requests no devices, or the bind failed before one was chosen. */
  NONE,
  /**
   * The Filter's allocation (the pod's annotations for this node) still fits under the lock and was
   * kept.
   */
  FILTER_KEPT,
  /** The pod was fitted on the node under the lock (no Filter allocation, or it no longer fit). */
  REFITTED,
  /**
   * The Filter's allocation still fit under the lock, but the configured device policy ({@code
   * spread}, {@code binpack}, ...) picks other devices on the usage read under the lock (e.g. gang
   * members filtered on one snapshot all chose the same GPU), so the policy's choice was written
   * ({@link PodBinder.Builder#rescoreUnderLock}).
   */
  RESCORED,
  /**
   * Re-fit disabled: the Filter's allocation was written without checking it (HAMi's behaviour).
   */
  UNCHECKED,
  /**
   * A retried bind (kubernetes#96579): the pod was already bound to this node by an earlier call of
   * this flow; its recorded allocation is reported, nothing was written and no lock taken.
   */
  ALREADY_RECORDED
}
