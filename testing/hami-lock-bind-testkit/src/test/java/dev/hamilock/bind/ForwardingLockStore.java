package dev.hamilock.bind;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import java.util.Objects;
import java.util.Optional;

/**
 * A test's {@link LockStore} over another: forwards the four requests, each after {@link
 * #beforeRequest}; a test overrides that hook or {@link #read} (the watch-based extras stay off, so
 * a lock over it attempts plainly).
 */
class ForwardingLockStore implements LockStore {
  private final LockStore delegate;

  ForwardingLockStore(LockStore delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /**
   * A store over {@code delegate} refusing an interrupted thread's requests, as Kubernetes' does.
   */
  static ForwardingLockStore refusingInterrupted(LockStore delegate) {
    return new ForwardingLockStore(delegate) {
      @Override
      protected void beforeRequest(String what) throws LockBackendException {
        refuseIfInterrupted(what);
      }
    };
  }

  /**
   * @throws LockBackendException INTERRUPTED, without sending, if this thread is interrupted
   *     ({@code AnnotationLockStore.write})
   */
  static void refuseIfInterrupted(String what) throws LockBackendException {
    if (Thread.currentThread().isInterrupted()) {
      throw new LockBackendException(
          LockBackendException.Kind.INTERRUPTED, what + " was interrupted", null);
    }
  }

  /** Called before each request is forwarded ({@code what}: read, create, replace, delete). */
  protected void beforeRequest(String what) throws LockBackendException {}

  @Override
  public Optional<String> read(String node, String key) throws LockBackendException {
    beforeRequest("read");
    return delegate.read(node, key);
  }

  @Override
  public CasResult createIfAbsent(String node, String key, String value)
      throws LockBackendException {
    beforeRequest("create");
    return delegate.createIfAbsent(node, key, value);
  }

  @Override
  public CasResult replaceIfEquals(String node, String key, String expected, String value)
      throws LockBackendException {
    beforeRequest("replace");
    return delegate.replaceIfEquals(node, key, expected, value);
  }

  @Override
  public boolean deleteIfEquals(String node, String key, String expected)
      throws LockBackendException {
    beforeRequest("delete");
    return delegate.deleteIfEquals(node, key, expected);
  }
}
