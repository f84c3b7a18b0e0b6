package dev.hamilock.core;

/**
 * A {@link NodeLock}'s device-plugin side, asked for with {@link NodeLock#observedValueRelease()}:
 * HAMi's device plugin reads the lock value to find the pod it serves (spec §3.1, {@code
 * pkg/util/util.go} GetPendingPod; {@code pkg/util/nodelock/nodelock.go} reads the annotation
 * unparsed the same way), so it can release with one compare-and-delete on that value instead of
 * reading it again. Implementations are thread-safe.
 */
public interface ObservedValueRelease {

  /**
   * Releases the lock on {@code node} held by {@code owner}, given the exact value the caller
   * observed on the node a moment ago. Same guarantee as {@link NodeLock#release(String,
   * LockOwner)}: only {@code owner}'s lock is ever removed. If {@code observedValue} parses to
   * {@code owner} (namespace/name), the value is removed only if it is still exactly {@code
   * observedValue}; if it changed meanwhile (e.g. the owner's binder re-stamped it), names someone
   * else, or is legacy or malformed, the call falls back to the owner-checked release (read,
   * compare, compare-and-delete), so a malformed or legacy observed value is never deleted.
   *
   * @param observedValue the exact lock value the caller read on {@code node} with {@link
   *     NodeLock#readValue}; non-null
   * @return {@code true} if this call removed the owner's lock, {@code false} if there was nothing
   *     of this owner's to remove
   * @throws LockBackendException if the store failed
   * @throws NullPointerException naming the argument for a null node, owner or observed value
   * @throws IllegalArgumentException for a blank node
   */
  boolean release(String node, LockOwner owner, String observedValue) throws LockBackendException;
}
