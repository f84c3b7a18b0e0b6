package dev.hamilock.bind;

/** Where the allocation a {@link PodBinder} wrote came from. */
public enum AllocationSource {
  /** No allocation: the pod requests no devices, or the bind failed before one was chosen. */
  NONE,
  /** The Filter's allocation still fits under the lock and was kept. */
  FILTER_KEPT,
  /** The pod was fitted on the node under the lock (no Filter allocation, or it no longer fit). */
  REFITTED,
  /**
   * The Filter's allocation still fit, but the policy's fresh choice was written ({@link
   * PodBinder.Rescore}).
   */
  RESCORED,
  /** Re-fit disabled: the Filter's allocation was written unchecked (HAMi's behaviour). */
  UNCHECKED,
  /** A retried bind (kubernetes#96579): the recorded allocation, nothing written or locked. */
  ALREADY_RECORDED
}
