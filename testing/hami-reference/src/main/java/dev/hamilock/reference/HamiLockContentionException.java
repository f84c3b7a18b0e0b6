package dev.hamilock.reference;

/**
 * Java analogue of HAMi's sentinel {@code ErrNodeLockContention} (message {@code node lock
 * contention}, {@code pkg/util/nodelock/nodelock.go}): the node lock is held by another live pod.
 * The message is the full Go text, e.g. {@code node n1 has been locked within 5m0s: node lock
 * contention}.
 *
 * <p>HAMi sometimes wraps contention (e.g. {@code failed to set node lock (...): node n1 is locked:
 * node lock contention}); the wrapper is a plain {@link HamiException} whose cause is this
 * exception, so always test with {@link #isContention(Throwable)} rather than {@code catch}.
 */
public final class HamiLockContentionException extends HamiException {
  private static final long serialVersionUID = 1L;

  /** The sentinel text HAMi appends to every contention error. */
  public static final String SENTINEL_TEXT = "node lock contention";

  /**
   * @param prefix the Go text before the wrapped sentinel, e.g. {@code node n1 is locked}; the
   *     message becomes {@code <prefix>: node lock contention}
   */
  HamiLockContentionException(String prefix) {
    super(prefix + ": " + SENTINEL_TEXT);
  }

  /**
   * Go's {@code errors.Is(err, ErrNodeLockContention)} ({@code IsNodeLockContention}): whether
   * {@code error} or any of its causes is a {@code HamiLockContentionException}.
   *
   * @param error any throwable, may be {@code null} (then {@code false})
   * @return {@code true} iff the cause chain contains contention
   */
  public static boolean isContention(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof HamiLockContentionException) {
        return true;
      }
      if (t.getCause() == t) {
        return false;
      }
    }
    return false;
  }
}
