package dev.hamilock.core;

/**
 * A {@link NodeLock}'s device-plugin side ({@link NodeLock#observedValueRelease()}): a release by
 * one compare-and-delete of the value the plugin read. Thread-safe.
 */
public interface ObservedValueRelease {

  /**
   * Releases {@code owner}'s lock by a compare-and-delete of {@code observedValue} ({@link
   * NodeLock#readValue}) if it parses to {@code owner}, else (or if it changed) as {@link
   * NodeLock#release(String, LockOwner)}: only the owner's lock is ever removed.
   *
   * @return whether this call removed the owner's lock
   * @throws LockBackendException if the store failed
   * @throws NullPointerException naming the argument for a null node, owner or observed value
   * @throws IllegalArgumentException for a blank node
   */
  boolean release(String node, LockOwner owner, String observedValue) throws LockBackendException;
}
