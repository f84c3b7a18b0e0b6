package dev.hamilock.core;

/** Base of every checked error of the node-lock API; callers branch on the subtype. */
public class NodeLockException extends Exception {

  private static final long serialVersionUID = 1L;

  /**
   * @param cause the cause, or {@code null}
   */
  protected NodeLockException(String message, Throwable cause) {
    super(message, cause);
  }
}
