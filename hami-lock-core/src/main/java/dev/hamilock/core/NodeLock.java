package dev.hamilock.core;

import java.time.Duration;
import java.util.Optional;

/**
 * One node-lock key on a set of nodes: HAMi's per-node mutex annotation
 * ({@code pkg/util/nodelock/nodelock.go}: {@code LockNode}, {@code ReleaseNodeLock}).
 *
 * <p>Every method is a single attempt; waiting and retrying belong to
 * {@code dev.hamilock.core.acquire.NodeLockAcquirer}. Implementations are thread-safe. The
 * shared semantics (re-entry, expiry, dangling owners, legacy and malformed values) are
 * implemented once in {@code dev.hamilock.core.store.StoreNodeLock}; backends implement the
 * smaller {@code LockStore} port instead of this interface.
 */
public interface NodeLock {

    /** HAMi's lock annotation key: {@value}. */
    String DEFAULT_KEY = "hami.io/mutex.lock";

    /** HAMi's default lock timeout (expiry): 5 minutes. */
    Duration DEFAULT_LOCK_TIMEOUT = Duration.ofMinutes(5);

    /**
     * The environment variable HAMi reads for the lock timeout, in Go duration text
     * ({@code 300s}, {@code 5m}): {@value}.
     */
    String LOCK_TIMEOUT_ENV = "HAMI_NODELOCK_EXPIRE";

    /** @return the lock key, e.g. {@code hami.io/mutex.lock} */
    String key();

    /** @return the lock timeout after which a held lock may be taken over */
    Duration lockTimeout();

    /**
     * One attempt to take the lock on {@code node} for {@code owner}.
     *
     * @param node  the node name; non-blank
     * @param owner the acquiring pod
     * @return how the lock was obtained
     * @throws LockContentionException  if another live owner holds an unexpired lock
     * @throws LockBackendException     if the store or the owner-liveness check failed (never
     *                                  treated as "owner gone")
     * @throws IllegalArgumentException naming the argument if {@code node} is null/blank or
     *                                  {@code owner} is null
     */
    AcquireOutcome acquire(String node, LockOwner owner) throws LockContentionException, LockBackendException;

    /**
     * Releases the lock on {@code node} if, and only if, it is held by {@code owner} (exact
     * namespace/name, and UID when both are known), with a compare-and-delete on the exact value
     * read. A lock held by anyone else, a legacy or a malformed value is left in place.
     *
     * @param node  the node name; non-blank
     * @param owner the releasing pod
     * @return {@code true} if this call removed the owner's lock, {@code false} if there was
     *         nothing of this owner's to remove
     * @throws LockBackendException     if the store failed
     * @throws IllegalArgumentException naming the argument for a null/blank node or null owner
     */
    boolean release(String node, LockOwner owner) throws LockBackendException;

    /**
     * Reads the current lock on {@code node}.
     *
     * @param node the node name; non-blank
     * @return the parsed record, empty if the node is not locked
     * @throws MalformedLockException   if the value present cannot be parsed (names the value)
     * @throws LockBackendException     if the store failed
     * @throws IllegalArgumentException naming the argument for a null/blank node
     */
    Optional<LockRecord> read(String node) throws MalformedLockException, LockBackendException;

    /**
     * The signal that fires when the lock on a node changes, letting waiters wake before the
     * next poll.
     *
     * @return the signal, or empty if this lock can only be polled
     */
    default Optional<LockReleaseSignal> releaseSignal() {
        return Optional.empty();
    }
}
