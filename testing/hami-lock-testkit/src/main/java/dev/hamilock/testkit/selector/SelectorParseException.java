package dev.hamilock.testkit.selector;

/**
 * A label or field selector string could not be parsed; kube-apiserver answers such a request with
 * 400 BadRequest. The message names the offending text.
 */
public final class SelectorParseException extends Exception {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what is wrong, naming the bad text
   */
  public SelectorParseException(String message) {
    super(message);
  }
}
