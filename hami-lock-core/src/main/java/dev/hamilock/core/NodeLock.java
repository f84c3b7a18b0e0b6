package dev.hamilock.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One node-lock key on a set of nodes: HAMi's per-node mutex annotation ({@code
 * pkg/util/nodelock/nodelock.go}: {@code LockNode}, {@code ReleaseNodeLock}). Every method is a
 * single attempt (waiting: {@code NodeLockAcquirer}); the semantics live once in {@code
 * StoreNodeLock}, over a backend's {@code LockStore}. Thread-safe.
 *
 * <p>Arguments: {@code node} a node name, {@code owner} a pod; a null one is a {@link
 * NullPointerException} naming it, a blank node an {@link IllegalArgumentException}. A failed store
 * is a {@link LockBackendException}.
 */
public interface NodeLock {

  /** HAMi's lock annotation key: {@value}. */
  String DEFAULT_KEY = "hami.io/mutex.lock";

  /** HAMi's default lock timeout (expiry): 5 minutes. */
  Duration DEFAULT_LOCK_TIMEOUT = Duration.ofMinutes(5);

  /** The environment variable HAMi reads for the lock timeout (Go duration text): {@value}. */
  String LOCK_TIMEOUT_ENV = "HAMI_NODELOCK_EXPIRE";

  /** The lock key, e.g. {@code hami.io/mutex.lock}. */
  String key();

  /** The lock timeout after which a held lock may be taken over. */
  Duration lockTimeout();

  /**
   * One attempt to take the lock on {@code node} for {@code owner}.
   *
   * @return how the lock was obtained
   * @throws LockContentionException if another live owner holds an unexpired lock
   * @throws LockBackendException if the store or the owner-liveness check failed (never treated as
   *     "owner gone")
   */
  AcquireOutcome acquire(String node, LockOwner owner)
      throws LockContentionException, LockBackendException;

  /**
   * {@link #acquire} by a caller that waits on contention, which may be answered from a watched
   * view without a request ({@code StoreNodeLock}). Default: {@link #acquire}.
   */
  default AcquireOutcome acquireWaiting(String node, LockOwner owner)
      throws LockContentionException, LockBackendException {
    return acquire(node, owner);
  }

  /**
   * Compare-and-deletes the lock on {@code node} only if held by {@code owner} ({@link
   * LockOwner#isSameOwner}); anyone else's, legacy or malformed value is left in place.
   *
   * @return whether this call removed the owner's lock
   * @throws LockBackendException if the store failed
   */
  boolean release(String node, LockOwner owner) throws LockBackendException;

  /**
   * The current lock value on {@code node} as stored, unparsed, for {@link
   * ObservedValueRelease#release}. The default re-formats {@link #read(String)}.
   *
   * @return the value, empty if the node is not locked
   * @throws LockBackendException if the store failed
   */
  default Optional<String> readValue(String node) throws LockBackendException {
    try {
      return read(node).map(LockRecordCodec::format);
    } catch (MalformedLockException e) {
      return Optional.of(e.value());
    }
  }

  /**
   * Whether {@code owner} still holds this lock on {@code node} in the store now (the bind flow
   * asks before it POSTs the Binding; a lock may have been taken over or removed). A removal right
   * after the answer stays possible: Kubernetes has no precondition across objects. The default
   * compares the owner of {@link #readValue}.
   *
   * @throws LockBackendException if the store failed
   */
  default boolean stillHeld(String node, LockOwner owner) throws LockBackendException {
    Objects.requireNonNull(owner, "owner");
    Optional<String> value = readValue(node);
    if (value.isEmpty()) {
      return false;
    }
    try {
      return LockRecordCodec.parse(value.get()).owner().filter(owner::isSameOwner).isPresent();
    } catch (MalformedLockException e) {
      return false;
    }
  }

  /**
   * Reads the current lock on {@code node}.
   *
   * @return the parsed record, empty if the node is not locked
   * @throws MalformedLockException if the value present cannot be parsed (names the value)
   * @throws LockBackendException if the store failed
   */
  Optional<LockRecord> read(String node) throws MalformedLockException, LockBackendException;

  /** The wake-up queue told of this lock's releases; empty if it can only be polled. */
  default Optional<LockReleaseSignal> releaseSignal() {
    return Optional.empty();
  }

  /**
   * Release by the text read with {@link #readValue} (HAMi's device plugin finds its pod from the
   * lock value, {@code pkg/util/util.go} GetPendingPod); empty by default.
   */
  default Optional<ObservedValueRelease> observedValueRelease() {
    return Optional.empty();
  }

  /**
   * Acquire conditioned on the version a watched view showed the lock free at; empty by default.
   */
  default Optional<VersionedAcquire> versionedAcquire() {
    return Optional.empty();
  }
}
