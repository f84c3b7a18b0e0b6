package dev.hamilock.core;

import java.util.Optional;

/**
 * A {@link NodeLock}'s hand-off capability: an acquire conditioned on the object's version (a
 * Node's {@code metadata.resourceVersion}) at which a watched view showed the lock free. A binder
 * that wins it knows every earlier holder wrote its allocation before that version, so its usage
 * reads may run beside the acquire. Thread-safe.
 */
public interface VersionedAcquire {

  /** The version a current watched view showed the lock free on {@code node} at; no request. */
  Optional<String> freeVersion(String node);

  /**
   * One attempt (arguments as {@link NodeLock#acquire}) that writes {@code owner}'s lock only if
   * the lock is absent and the object is still at {@code version}.
   *
   * @param version a version {@link #freeVersion} gave
   * @return {@link AcquireOutcome#ACQUIRED} if written; empty if the object changed since
   * @throws LockBackendException as {@link NodeLock#acquire}
   */
  Optional<AcquireOutcome> acquireAt(String node, LockOwner owner, String version)
      throws LockBackendException;
}
