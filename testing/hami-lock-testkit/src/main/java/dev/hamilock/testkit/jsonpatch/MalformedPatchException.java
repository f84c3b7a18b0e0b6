package dev.hamilock.testkit.jsonpatch;

/**
 * The patch document itself cannot be decoded (not JSON, not an array of operation objects for RFC
 * 6902, not an object for RFC 7386). kube-apiserver answers this with 400 BadRequest.
 */
public final class MalformedPatchException extends PatchException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what is wrong with the document, naming the bad value
   */
  public MalformedPatchException(String message) {
    super(message);
  }
}
