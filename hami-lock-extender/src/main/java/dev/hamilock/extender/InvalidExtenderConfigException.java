package dev.hamilock.extender;

/**
 * The extender refuses to start: an unknown flag, a flag without a value, a value that is not a Go
 * duration or port, or settings that contradict each other (the node-lock retry timeout not below
 * the extender HTTP timeout). The message names the flag(s) and value(s).
 */
public final class InvalidExtenderConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public InvalidExtenderConfigException(String message) {
    super(message);
  }

  public InvalidExtenderConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
