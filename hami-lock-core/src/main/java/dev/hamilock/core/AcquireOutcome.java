package dev.hamilock.core;

/** How a successful {@link NodeLock#acquire(String, LockOwner)} obtained the lock. */
public enum AcquireOutcome {
  /** The node had no lock; a fresh value was written. */
  ACQUIRED,
  /** The same owner already held it (HAMi PR #2255); the value is re-stamped. */
  REENTERED,
  /** The previous holder's lock was older than the lock timeout and was replaced. */
  TOOK_OVER_EXPIRED,
  /** The previous holder is gone ({@link OwnerLiveness}) and its lock was replaced. */
  TOOK_OVER_DANGLING;
}
