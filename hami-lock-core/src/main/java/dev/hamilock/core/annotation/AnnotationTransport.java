package dev.hamilock.core.annotation;

import dev.hamilock.core.BackendFailure;
import dev.hamilock.core.LockBackendException;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What a Kubernetes client must do for {@link AnnotationLockStore}: one PATCH and one GET of a Node
 * (no retries, no decisions), each failure classified as {@link Failure}. Implementations are
 * thread-safe.
 */
public interface AnnotationTransport {

  /**
   * One {@code PATCH /api/v1/nodes/<node>}.
   *
   * @param merge {@code true} for {@code application/merge-patch+json}, {@code false} for {@code
   *     application/json-patch+json}
   * @param body the body from {@link AnnotationPatches}, sent byte for byte
   * @throws Failure on any answer but 2xx, or none
   */
  void patch(String node, boolean merge, String body) throws Failure;

  /**
   * One {@code GET /api/v1/nodes/<node>} without {@code resourceVersion} (a quorum read).
   *
   * @return the node's annotations and resourceVersion
   * @throws Failure on any answer but 2xx, or none
   */
  NodeAnnotations read(String node) throws Failure;

  /**
   * What one GET tells the store.
   *
   * @param annotations {@code metadata.annotations}, or {@code null} if the node has no such map
   *     (JSON Patch cannot add under it)
   * @param resourceVersion {@code metadata.resourceVersion}, or {@code null} if absent
   */
  record NodeAnnotations(Map<String, String> annotations, String resourceVersion) {

    /**
     * @param key annotation key
     * @return its value, empty if absent
     */
    public Optional<String> value(String key) {
      return annotations == null ? Optional.empty() : Optional.ofNullable(annotations.get(key));
    }
  }

  /** A request that did not answer 2xx, classified by the client adapter. */
  final class Failure extends Exception {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final transient String retryAfter;
    private final boolean patchNotApplicable;
    private final boolean interruption;

    /**
     * @param status the HTTP status, 0 for no answer (timeout, reset, interruption)
     * @param retryAfter the answer's {@code Retry-After} header, or {@code null}
     * @param patchNotApplicable for a 422: whether the JSON patch did not apply ({@link
     *     #patchNotApplicable(String, Collection)})
     * @param interruption whether the call failed because this thread was interrupted
     * @param description e.g. {@code HTTP 500: {"kind":"Status",...}} or {@code no answer (...)}
     * @param cause the client's exception, kept as the cause of the {@link LockBackendException}
     */
    public Failure(
        int status,
        String retryAfter,
        boolean patchNotApplicable,
        boolean interruption,
        String description,
        Throwable cause) {
      super(description, cause, false, false);
      this.status = status;
      this.retryAfter = retryAfter;
      this.patchNotApplicable = patchNotApplicable;
      this.interruption = interruption;
    }

    /** The HTTP status, 0 for none. */
    public int status() {
      return status;
    }

    /** The status as {@link LockBackendException#httpStatus()} reports it (empty for none). */
    public OptionalInt httpStatus() {
      return status >= 100 && status <= 599 ? OptionalInt.of(status) : OptionalInt.empty();
    }

    /** {@code true} for no answer, 429 and 5xx: the write may or may not have been applied. */
    public boolean isTransient() {
      return status == 0 || status == 429 || (status >= 500 && status <= 599);
    }

    /**
     * Whether a 422 answers a JSON patch that did not apply rather than a validation failure:
     * kube-apiserver's {@code handlers/patch.go} then names neither the object ({@code
     * details.name}, {@code null} if absent) nor a field of {@code details.causes}.
     */
    public static boolean patchNotApplicable(String detailsName, Collection<String> causeFields) {
      return (detailsName == null || detailsName.isEmpty())
          && causeFields.stream().allMatch(f -> f == null || f.isEmpty());
    }

    /** Whether this is a 422 from a JSON patch that did not apply. */
    public boolean isPatchNotApplicable() {
      return status == 422 && patchNotApplicable;
    }

    /** Whether the calling thread's interruption ended the call. */
    public boolean isInterruption() {
      return interruption;
    }

    /**
     * The {@code Retry-After} of a 429 or 503 in delta-seconds (RFC 9110 §10.2.3; the HTTP-date
     * form falls back to the caller's back-off), capped at {@code cap}; empty if none is valid.
     */
    public Optional<Duration> retryAfter(Duration cap) {
      if (retryAfter == null || (status != 429 && status != 503)) {
        return Optional.empty();
      }
      try {
        long seconds = Long.parseLong(retryAfter.trim());
        return seconds < 0
            ? Optional.empty()
            : Optional.of(seconds > cap.toSeconds() ? cap : Duration.ofSeconds(seconds));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
    }

    /**
     * The lock's typed exception for a final failure ({@link BackendFailure#classify}) of {@code
     * what}, NOT_FOUND reported as {@code notFound}.
     */
    public LockBackendException toBackend(String what, LockBackendException.Kind notFound) {
      // the body is in the description ("HTTP 409: {...}"), which is all the UID check reads
      LockBackendException.Kind kind = BackendFailure.classify(status, getMessage(), interruption);
      if (kind == LockBackendException.Kind.NOT_FOUND) {
        kind = notFound;
      }
      return new LockBackendException(
          kind, what + " failed: " + getMessage(), getCause(), httpStatus());
    }
  }
}
