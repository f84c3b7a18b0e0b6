package dev.hamilock.core;

/** How a successful {@link NodeLock#acquire(String, LockOwner)} obtained the lock. */
public enum AcquireOutcome {
  /** The node had no lock; a fresh value was written. */
  ACQUIRED,
  /**
   * The same owner already held it (multi-vendor re-entry, HAMi PR #2255). A store-backed lock
   * re-stamps the value with the current time (see {@code StoreNodeLock}).
   */
  REENTERED,
  /** The previous holder's lock was older than the lock timeout and was replaced. */
  TOOK_OVER_EXPIRED,
  /** The previous holder is gone ({@link OwnerLiveness}) and its lock was replaced. */
  TOOK_OVER_DANGLING;
}
