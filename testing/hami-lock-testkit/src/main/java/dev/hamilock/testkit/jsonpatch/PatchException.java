package dev.hamilock.testkit.jsonpatch;

/**
 * A patch could not be used. Subclasses distinguish an undecodable patch document ({@link
 * MalformedPatchException}, which kube-apiserver answers with 400 BadRequest) from a well-formed
 * patch that does not apply to the current object ({@link PatchNotApplicableException}, answered
 * with 422 Invalid).
 */
public abstract sealed class PatchException extends Exception
    permits MalformedPatchException, PatchNotApplicableException {
  private static final long serialVersionUID = 1L;

  PatchException(String message) {
    super(message);
  }
}
