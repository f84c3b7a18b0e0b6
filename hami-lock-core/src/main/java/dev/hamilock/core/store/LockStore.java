package dev.hamilock.core.store;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockReleaseSignal;
import java.util.Map;
import java.util.Optional;

/**
 * Backend port: atomic operations on one string value per (node, key), on which {@link
 * StoreNodeLock} builds HAMi's semantics; on Kubernetes a node annotation ({@link
 * dev.hamilock.core.annotation.AnnotationLockStore}). Compare-and-sets return their witness ({@link
 * CasResult}), as {@link java.util.concurrent.atomic.AtomicReference#compareAndExchange} does.
 *
 * <p><b>Contract</b> (the in-memory store is the reference):
 *
 * <ul>
 *   <li>Writes to one (node, key) are atomic across processes; values compare by exact string.
 *   <li>{@link CasResult.NotWritten} (or {@code false} from {@link #deleteIfEquals}): nothing was
 *       written; the witness is a value the store saw (possibly changed since), never an invented
 *       one. A create that kept losing races answers {@code NotWritten}: contention, not an error.
 *   <li>Ambiguous outcomes (timeout, 5xx, lost response) are decided by re-reading (design decision
 *       4); only an outcome still unknown is {@link LockBackendException.Kind#UNAVAILABLE}.
 *   <li>Missing node ⇒ {@link LockBackendException.Kind#NOT_FOUND}; refused request ⇒ {@link
 *       LockBackendException.Kind#REJECTED}; interruption ⇒ flag restored and {@link
 *       LockBackendException.Kind#INTERRUPTED}; never unchecked exceptions for backend failures
 *       ({@link StoreNodeLock} takes one as {@link LockBackendException.Kind#UNAVAILABLE}).
 *   <li>Unrelated changes to the same object must not fail a precondition.
 *   <li>A {@link #releaseSignal()} must be told of every removal of a value, at least eventually.
 * </ul>
 *
 * Arguments are never null or blank ({@link StoreNodeLock} validates them).
 */
public interface LockStore {

  /**
   * The current value, empty if absent: a quorum read, never a cached or watched view.
   *
   * @throws LockBackendException as described in the class contract
   */
  Optional<String> read(String node, String key) throws LockBackendException;

  /**
   * Every key's value on {@code node} from one {@link #read}-like request.
   *
   * @return key to value; empty if this store cannot (the default)
   * @throws LockBackendException as described in the class contract
   */
  default Optional<Map<String, String>> readAll(String node) throws LockBackendException {
    return Optional.empty();
  }

  /**
   * Writes {@code value} if no value is present.
   *
   * @return written, or not with the value present (empty if removed meanwhile: try again)
   * @throws LockBackendException as described in the class contract
   */
  CasResult createIfAbsent(String node, String key, String value) throws LockBackendException;

  /**
   * Replaces the value if it equals {@code expected}.
   *
   * @return written, or not with the value present instead (empty if none)
   * @throws LockBackendException as described in the class contract
   */
  CasResult replaceIfEquals(String node, String key, String expected, String value)
      throws LockBackendException;

  /**
   * Removes the value if it equals {@code expected} (no witness: a release needs none).
   *
   * @return whether removed
   * @throws LockBackendException as described in the class contract
   */
  boolean deleteIfEquals(String node, String key, String expected) throws LockBackendException;

  /**
   * A hint, never an answer: the value a current watched view shows, without a request; empty if
   * absent, unknown or not current (the default: no view).
   */
  default Optional<String> watchedValue(String node, String key) {
    return Optional.empty();
  }

  /**
   * A hint: the object's version (a Node's {@code metadata.resourceVersion}) at which a current
   * watched view showed the value absent, without a request; empty otherwise (the default).
   */
  default Optional<String> watchedFreeVersion(String node, String key) {
    return Optional.empty();
  }

  /**
   * Writes {@code value} if no value is present and the object holding it is still at {@code
   * version} ({@link #watchedFreeVersion}); any other change to the object since fails it too.
   *
   * @return written, or not without a witness; the default writes nothing
   * @throws LockBackendException as described in the class contract
   */
  default CasResult createIfAbsentAt(String node, String key, String value, String version)
      throws LockBackendException {
    return CasResult.notWritten(Optional.empty());
  }

  /** {@return the wake-up queue told of every removal (release) of a value, if the store can} */
  default Optional<LockReleaseSignal> releaseSignal() {
    return Optional.empty();
  }
}
