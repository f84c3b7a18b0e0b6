package dev.hamilock.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One node-lock key on a set of nodes: HAMi's per-node mutex annotation ({@code
 * pkg/util/nodelock/nodelock.go}: {@code LockNode}, {@code ReleaseNodeLock}).
 *
 * <p>Every method is a single attempt; waiting and retrying belong to {@code
 * dev.hamilock.core.acquire.NodeLockAcquirer}. Implementations are thread-safe. The shared
 * semantics (re-entry, expiry, dangling owners, legacy and malformed values) are implemented once
 * in {@code dev.hamilock.core.store.StoreNodeLock}; backends implement the smaller {@code
 * LockStore} port instead of this interface.
 *
 * <p>Arguments of every method: {@code node} a node name, {@code owner} a pod; a null one is a
 * {@link NullPointerException} naming it, a blank node an {@link IllegalArgumentException}. A
 * failed store is a {@link LockBackendException}.
 */
public interface NodeLock {

  /** HAMi's lock annotation key: {@value}. */
  String DEFAULT_KEY = "hami.io/mutex.lock";

  /** HAMi's default lock timeout (expiry): 5 minutes. */
  Duration DEFAULT_LOCK_TIMEOUT = Duration.ofMinutes(5);

  /**
   * The environment variable HAMi reads for the lock timeout, in Go duration text ({@code 300s},
   * {@code 5m}): {@value}.
   */
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
   * {@link #acquire} by a caller that waits on contention (a gang member's attempt in {@code
   * NodeLockAcquirer}): an implementation may answer contention from a current watched view without
   * a request ({@code StoreNodeLock}). The default is {@link #acquire}; arguments, result and
   * exceptions as there.
   */
  default AcquireOutcome acquireWaiting(String node, LockOwner owner)
      throws LockContentionException, LockBackendException {
    return acquire(node, owner);
  }

  /**
   * Releases the lock on {@code node} if, and only if, it is held by {@code owner} (exact
   * namespace/name, and UID when both are known), with a compare-and-delete on the exact value
   * read. A lock held by anyone else, a legacy or a malformed value is left in place.
   *
   * @return {@code true} if this call removed the owner's lock, {@code false} if there was nothing
   *     of this owner's to remove
   * @throws LockBackendException if the store failed
   */
  boolean release(String node, LockOwner owner) throws LockBackendException;

  /**
   * Reads the current lock value on {@code node} as stored, unparsed (HAMi {@code nodelock.go}
   * reads the annotation the same way before parsing it). The text can be passed to {@link
   * ObservedValueRelease#release} by the process that later releases the lock for the owner it
   * names.
   *
   * <p>The default re-formats {@link #read(String)} (the stored text for the UTC values this
   * library and HAMi write; a difference only makes an observed-value release take the
   * owner-checked path); {@code StoreNodeLock} returns the stored text exactly.
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
   * Whether {@code owner} still holds this lock on {@code node}, checked right before an action
   * that is only safe under the lock (the bind flow asks before it POSTs the Binding), from what
   * the store holds now: a lock can be lost to a takeover after expiry, or removed by another
   * writer (an operator, a forced {@code hami-lock-doctor unlock}, HAMi's scheduler on a skewed
   * clock).
   *
   * <p>The default reads the value and compares the owner it names ({@link LockOwner#isSameOwner});
   * {@code StoreNodeLock} is stricter: the stored value must still be exactly the value it wrote
   * (so a lock taken over and given back counts as lost), confirmed by one read, or — past half the
   * lock timeout — by a compare-and-set re-stamp, after which the owner keeps it at least half a
   * lock timeout. One request either way.
   *
   * <p><b>What it cannot exclude:</b> a Binding cannot be conditional on a node annotation
   * (Kubernetes has no precondition across objects): a removal between this answer and the action
   * stays possible, within one round trip.
   *
   * @return {@code true} if the lock is still the owner's
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

  /**
   * The wake-up queue told of releases of this lock on a node, letting waiters wake before the next
   * poll (one per release, oldest first: {@link FairReleaseQueue}).
   *
   * @return the signal, or empty if this lock can only be polled
   */
  default Optional<LockReleaseSignal> releaseSignal() {
    return Optional.empty();
  }

  /**
   * The device-plugin side's capability: a release by the lock text it read with {@link #readValue}
   * (HAMi's plugin finds the pod it serves from the lock value, spec §3.1, {@code pkg/util/util.go}
   * GetPendingPod). Only the hand-off asks for it; a lock without it is released with {@link
   * #release(String, LockOwner)} (read, compare, compare-and-delete).
   *
   * @return the capability, empty by default; {@code StoreNodeLock} offers it
   */
  default Optional<ObservedValueRelease> observedValueRelease() {
    return Optional.empty();
  }

  /**
   * The hand-off capability: an acquire conditioned on the version at which a watched view showed
   * the lock free, so a binder may read the node's usage beside the acquire.
   *
   * @return the capability, empty by default; {@code StoreNodeLock} offers it
   */
  default Optional<VersionedAcquire> versionedAcquire() {
    return Optional.empty();
  }
}
