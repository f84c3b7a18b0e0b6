package dev.hamilock.core;

/**
 * Base of every checked error of the node-lock API. Callers branch on the subtype, never on the
 * message: {@link LockContentionException} (another pod holds the lock; HAMi's {@code
 * ErrNodeLockContention}), {@link LockBackendException} (the store or the owner-liveness check
 * failed) and {@link MalformedLockException} (a lock value cannot be parsed).
 */
public class NodeLockException extends Exception {

  private static final long serialVersionUID = 1L;

  /**
   * @param cause the cause, or {@code null}
   */
  protected NodeLockException(String message, Throwable cause) {
    super(message, cause);
  }
}
