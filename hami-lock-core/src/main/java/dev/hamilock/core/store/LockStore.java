package dev.hamilock.core.store;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockReleaseSignal;
import java.util.Map;
import java.util.Optional;

/**
 * Backend port: atomic operations on one string value per (node, key). This is all a backend
 * implements; {@link StoreNodeLock} builds HAMi's lock semantics on top of it once.
 *
 * <p>The two compare-and-set operations return their <em>witness</em> ({@link CasResult}), as
 * {@link java.util.concurrent.atomic.AtomicReference#compareAndExchange} does: the value found when
 * the precondition did not hold, so a contended acquire decides from the answer of its write and
 * needs no separate read.
 *
 * <p>For Kubernetes the value is the node annotation {@code key}, one JSON Patch per write ({@link
 * dev.hamilock.core.annotation.AnnotationLockStore}).
 *
 * <p><b>Contract</b> (every implementation; the in-memory store is the reference):
 *
 * <ul>
 *   <li>Each write is atomic with respect to every other write to the same (node, key), in this and
 *       every other process; values are compared by exact string equality.
 *   <li>{@link CasResult.NotWritten} (or {@code false} from {@link #deleteIfEquals}) means the
 *       precondition did not hold and nothing was written. Its witness is the value present when
 *       the store looked; a store that must look after the refusal (a read, a watched view) may
 *       return a value that has changed since, or "absent" for a refused create (the value was
 *       removed meanwhile), never one it did not see. A {@code createIfAbsent} that kept losing the
 *       race to other writers (the object changed under every conditional attempt) also answers
 *       {@code NotWritten}, with the value it then reads: that is contention, never a backend
 *       error.
 *   <li>Ambiguous outcomes (timeout, HTTP 5xx, lost response) are the backend's job (design
 *       decision 4): re-read the value and answer from what is stored ; only if the outcome stays
 *       unknown throw {@link LockBackendException.Kind#UNAVAILABLE}. Every answer is complete in
 *       itself.
 *   <li>A missing node ⇒ {@link LockBackendException.Kind#NOT_FOUND}; refused requests (403, 400, a
 *       422 that is not a failed {@code test}) ⇒ {@link LockBackendException.Kind#REJECTED};
 *       interruption ⇒ restore the interrupt flag and throw {@link
 *       LockBackendException.Kind#INTERRUPTED}. Never throw unchecked exceptions for backend
 *       failures.
 *   <li>Unrelated changes to the same object (other annotations, status) must not make a
 *       precondition fail.
 *   <li>If {@link #releaseSignal()} is present, it must be told of every removal of a value (at
 *       least eventually, e.g. from a watch), and rarely otherwise.
 * </ul>
 *
 * Arguments are never null or blank ({@link StoreNodeLock} validates them).
 */
public interface LockStore {

  /**
   * The current value, empty if absent, reflecting every write acknowledged before this call (a
   * quorum read, never a cached or watched view: {@link StoreNodeLock#stillHeld} confirms with it).
   *
   * @throws LockBackendException as described in the class contract
   */
  Optional<String> read(String node, String key) throws LockBackendException;

  /**
   * Every key's value on {@code node} from one request as {@link #read}'s, for stores of one
   * backend sharing one object (a Node's annotations): {@link StoreNodeLock#firstLost} reads it
   * once.
   *
   * @return key to value as one quorum read found them; empty if this store cannot (the default)
   * @throws LockBackendException as described in the class contract
   */
  default Optional<Map<String, String>> readAll(String node) throws LockBackendException {
    return Optional.empty();
  }

  /**
   * Writes {@code value} if no value is present.
   *
   * @return {@link CasResult.Written} if written; otherwise {@link CasResult.NotWritten} with the
   *     value present (even an equal one), or empty if it was removed again before the store could
   *     see it (try again)
   * @throws LockBackendException as described in the class contract
   */
  CasResult createIfAbsent(String node, String key, String value) throws LockBackendException;

  /**
   * Replaces the value if it equals {@code expected}.
   *
   * @return {@link CasResult.Written} if replaced; otherwise {@link CasResult.NotWritten} with the
   *     value present instead (empty if none)
   * @throws LockBackendException as described in the class contract
   */
  CasResult replaceIfEquals(String node, String key, String expected, String value)
      throws LockBackendException;

  /**
   * Removes the value if it equals {@code expected}. No witness: a release needs only "gone or
   * not", and one that finds another value decides from a read with an owner check anyway.
   *
   * @return {@code true} if removed; {@code false} if the value was absent or different
   * @throws LockBackendException as described in the class contract
   */
  boolean deleteIfEquals(String node, String key, String expected) throws LockBackendException;

  /**
   * A hint, never an answer: the value a watched view of the store (a connected, current node
   * watch) shows for {@code (node, key)} now, without a request. {@link StoreNodeLock#acquire}
   * skips a compare-and-set bound to fail when it shows a value the store itself refused a write
   * with (or this process wrote) within the retry policy's {@link
   * dev.hamilock.core.RetryPolicy#watchedPollInterval()}; the compare-and-set stays the authority.
   *
   * @return the watched value; empty if absent, unknown, or the view is not current (the default:
   *     no view)
   */
  default Optional<String> watchedValue(String node, String key) {
    return Optional.empty();
  }

  /**
   * A hint, never an answer: the version of the object holding {@code (node, key)} (a Node's {@code
   * metadata.resourceVersion}) at which a connected, current watched view last showed the value
   * absent; no request. {@link StoreNodeLock#versionedAcquire} offers it to a binder.
   *
   * @return the version; empty if the value is present, unknown, or the view is not current (the
   *     default: no view)
   */
  default Optional<String> watchedFreeVersion(String node, String key) {
    return Optional.empty();
  }

  /**
   * Writes {@code value} if no value is present and the object holding it is still at {@code
   * version} ({@link #watchedFreeVersion}); any other change to the object since fails it too.
   *
   * @return {@link CasResult.Written} if written; otherwise {@link CasResult.NotWritten} with no
   *     witness (the caller decides with {@link #createIfAbsent}); the default writes nothing
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
