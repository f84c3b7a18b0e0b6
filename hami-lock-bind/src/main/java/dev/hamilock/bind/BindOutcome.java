package dev.hamilock.bind;

/**
 * How a {@link PodBinder#bind} call ended. Only {@link #BOUND} leaves the node locks held (the
 * device plugin releases them, HAMi {@code pkg/scheduler/scheduler.go} Bind); every other outcome
 * except {@link #UNKNOWN} leaves no lock of the pod and no allocation annotation behind.
 */
public enum BindOutcome {
  /**
   * The pod is bound to the node with a verified allocation; the locks stay held for the device
   * plugin. Also a retried bind of a pod this flow bound (kubernetes#96579), taking no lock.
   */
  BOUND,
  /** Another pod holds a node lock and the pod is no gang member (or retries are off). */
  CONTENDED,
  /** A gang member waited the whole node-lock retry timeout ({@code --node-lock-retry-timeout}). */
  TIMED_OUT,
  /** The pod does not fit the node's fresh usage under the lock, or that usage is unknown. */
  DOES_NOT_FIT,
  /** The pod's resource requests cannot be parsed (e.g. {@code nvidia.com/gpumem: 16Gi}). */
  INVALID_POD,
  /** The pod (or the requested UID incarnation) does not exist, or disappeared mid-bind. */
  POD_NOT_FOUND,
  /** The node does not exist, or disappeared mid-bind. */
  NODE_NOT_FOUND,
  /** The pod was already bound (to {@link BindResult#boundNode()}); nothing was changed. */
  ALREADY_BOUND,
  /** A backend error, a refused binding, or an ambiguous binding that turned out not applied. */
  FAILED,
  /**
   * The binding's outcome stayed unknown (ambiguous answer and every re-read failed). Locks and
   * allocation annotations are left in place, since the pod may be bound and need them; the lock
   * expires after the lock timeout if the device plugin never releases it.
   */
  UNKNOWN
}
