package dev.hamilock.core;

/**
 * A node-lock value {@link LockRecordCodec} cannot parse (HAMi {@code ParseNodeLock}); the message
 * names the value.
 */
public final class MalformedLockException extends NodeLockException {

  private static final long serialVersionUID = 1L;

  private final String value;

  /**
   * @param value the rejected value, verbatim
   * @param reason the full message (must name the value)
   */
  public MalformedLockException(String value, String reason) {
    super(reason, null);
    this.value = value;
  }

  /** {@return the rejected lock value, verbatim} */
  public String value() {
    return value;
  }
}
