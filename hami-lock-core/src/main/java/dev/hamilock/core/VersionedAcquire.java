package dev.hamilock.core;

import java.util.Optional;

/**
 * A {@link NodeLock}'s hand-off capability, asked for with {@link NodeLock#versionedAcquire()}: an
 * acquire conditioned on the version of the object holding the lock (a Node's {@code
 * metadata.resourceVersion}) at which a watched view showed the lock free. A binder that starts its
 * usage reads after learning that version and wins this acquire knows that nobody held the lock in
 * between: every earlier holder released at or before that version, so it wrote its allocation
 * before the reads began, and they see it. The reads can then run beside the acquire instead of
 * after it. Comparing versions of one object only (apimachinery gives resourceVersions no order
 * across resources). Implementations are thread-safe.
 */
public interface VersionedAcquire {

  /**
   * The version at which a watched view last showed the lock free on {@code node}; no request.
   *
   * @return the object's version; empty if the view shows the lock held, knows nothing of the node,
   *     is not current, or this process leaves the lock to other schedulers for a turn
   */
  Optional<String> freeVersion(String node);

  /**
   * One attempt (arguments as {@link NodeLock#acquire}) that writes {@code owner}'s lock only if
   * the lock is absent and the object is still at {@code version}.
   *
   * @param version a version {@link #freeVersion} gave
   * @return {@link AcquireOutcome#ACQUIRED} if written; empty if nothing was written (the object
   *     changed since {@code version}, for any reason: decide with a plain {@link
   *     NodeLock#acquire})
   * @throws LockBackendException as {@link NodeLock#acquire}
   */
  Optional<AcquireOutcome> acquireAt(String node, LockOwner owner, String version)
      throws LockBackendException;
}
