package dev.hamilock.core;

/**
 * A node-lock value that is neither the owner form {@code <RFC3339>,<namespace>,<name>} nor the
 * legacy form {@code <RFC3339>}; the message names the value (HAMi {@code ParseNodeLock} in {@code
 * pkg/util/nodelock/nodelock.go}), e.g. {@code malformed lock annotation: expected 3 parts, got 2
 * from a,b}.
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
