package dev.hamilock.testkit.jsonpatch;

/**
 * A decodable RFC 6902 patch failed against the target document: a failed {@code test}, a missing
 * path, a bad array index or an unknown operation. kube-apiserver answers this with 422 Invalid
 * (message "the server rejected our request due to an error in our request").
 */
public final class PatchNotApplicableException extends PatchException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message the evanphx/json-patch v4 style error text, e.g. {@code testing value
   *     /metadata/annotations/a failed}
   */
  public PatchNotApplicableException(String message) {
    super(message);
  }
}
