package dev.hamilock.k8s.internal;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeException;
import dev.failsafe.RetryPolicy;
import dev.hamilock.core.BackendFailure;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import io.kubernetes.client.openapi.ApiException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Predicate;

/**
 * Classification of client-java failures (kube-api-notes §4.9) and the Failsafe retry of idempotent
 * reads: code 0 (timeout, connection reset), HTTP 5xx and 429 are transient; 429 waits for {@code
 * Retry-After} (capped); everything else is returned at once.
 *
 * <p>Not part of the public API. Thread-safe.
 */
public final class ApiFailures {

  /** A read that may be repeated. */
  @FunctionalInterface
  public interface ApiCall<T> {
    T run() throws ApiException;
  }

  private final RetryPolicy<Object> readPolicy;
  private final RetryPolicy<Object> writePolicy;
  private final Duration maxRetryAfter;

  /**
   * @param maxAttempts attempts per read (and per write answered 429), at least 1
   * @param minBackoff first back-off delay
   * @param maxBackoff largest back-off delay
   * @param maxRetryAfter cap on an honoured {@code Retry-After}
   */
  public ApiFailures(
      int maxAttempts, Duration minBackoff, Duration maxBackoff, Duration maxRetryAfter) {
    this.maxRetryAfter = maxRetryAfter;
    this.readPolicy = policy(maxAttempts, minBackoff, maxBackoff, a -> failure(a).isTransient());
    this.writePolicy = policy(maxAttempts, minBackoff, maxBackoff, a -> a.getCode() == 429);
  }

  private RetryPolicy<Object> policy(
      int maxAttempts, Duration minBackoff, Duration maxBackoff, Predicate<ApiException> retry) {
    return RetryPolicy.builder()
        .handleIf(
            e ->
                e instanceof ApiException a
                    && retry.test(a)
                    && !Thread.currentThread().isInterrupted())
        .withMaxAttempts(maxAttempts)
        .withBackoff(minBackoff, maxBackoff)
        .withJitter(0.25)
        .withDelayFn(
            ctx ->
                ctx.getLastException() instanceof ApiException a
                    ? retryAfter(a).orElse(Duration.ofMillis(-1))
                    : Duration.ofMillis(-1))
        .build();
  }

  /** Runs an idempotent call, retrying transient failures; throws the last failure. */
  public <T> T read(ApiCall<T> call) throws ApiException, InterruptedException {
    return run(readPolicy, call);
  }

  /** Runs a write, repeated only when answered 429 (certainly not applied); throws the last. */
  public <T> T write(ApiCall<T> call) throws ApiException, InterruptedException {
    return run(writePolicy, call);
  }

  private static <T> T run(RetryPolicy<Object> policy, ApiCall<T> call)
      throws ApiException, InterruptedException {
    try {
      return Failsafe.with(policy).get(call::run);
    } catch (FailsafeException e) {
      Throwable cause = e.getCause();
      if (cause instanceof ApiException a) {
        throw a;
      }
      if (cause instanceof InterruptedException i) {
        throw i;
      }
      throw e;
    }
  }

  /** {@link Failure#patchNotApplicable} of a 422's body. */
  public static boolean isPatchNotApplicable(ApiException e) {
    if (e.getCode() != 422) {
      return false;
    }
    JsonObject details =
        Optional.ofNullable(e.getResponseBody())
            .flatMap(KubeHttp::parseObject)
            .map(status -> status.get("details") instanceof JsonObject d ? d : null)
            .orElseGet(JsonObject::new);
    List<String> fields = new ArrayList<>();
    if (details.get("causes") instanceof JsonArray causes) {
      for (JsonElement c : causes) {
        fields.add(
            c instanceof JsonObject o && o.get("field") instanceof JsonPrimitive f
                ? f.getAsString()
                : null);
      }
    }
    String name = details.get("name") instanceof JsonPrimitive n ? n.getAsString() : null;
    return Failure.patchNotApplicable(name, fields);
  }

  /** Whether the failure is an interrupted I/O caused by thread interruption (not a timeout). */
  public static boolean isInterruption(ApiException e) {
    return e.getCode() == 0
        && e.getCause() instanceof InterruptedIOException
        && Thread.currentThread().isInterrupted();
  }

  /** The {@code Retry-After} of a 429 (or 503), capped ({@link Failure#retryAfter(Duration)}). */
  public Optional<Duration> retryAfter(ApiException e) {
    return failure(e).retryAfter(maxRetryAfter);
  }

  /** A final failure's kind ({@link BackendFailure#classify}); an interruption keeps the flag. */
  public static BackendFailure.Kind kind(ApiException e) {
    return BackendFailure.classify(e.getCode(), e.getResponseBody(), isInterruption(e));
  }

  /** A final failure as the lock's exception about {@code what}; NOT_FOUND as {@code notFound}. */
  public static LockBackendException toBackend(
      ApiException e, String what, LockBackendException.Kind notFound) {
    LockBackendException.Kind kind = kind(e);
    return new LockBackendException(
        kind == BackendFailure.Kind.NOT_FOUND ? notFound : kind,
        what + " failed: " + describe(e),
        e,
        httpStatus(e));
  }

  /**
   * A client-java failure classified for core: status (0 for no answer), the {@code Retry-After}
   * header, whether a 422 is a patch that did not apply, whether interruption ended the call.
   */
  public static Failure failure(ApiException e) {
    String retryAfter = null;
    if (e.getResponseHeaders() != null) {
      for (Map.Entry<String, List<String>> h : e.getResponseHeaders().entrySet()) {
        if ("Retry-After".equalsIgnoreCase(h.getKey()) && !h.getValue().isEmpty()) {
          retryAfter = h.getValue().get(0);
        }
      }
    }
    return new Failure(
        e.getCode(), retryAfter, isPatchNotApplicable(e), isInterruption(e), describe(e), e);
  }

  /** Its HTTP status, empty for code 0 (no answer: timeout, reset, interruption). */
  public static OptionalInt httpStatus(ApiException e) {
    int c = e.getCode();
    return c >= 100 && c <= 599 ? OptionalInt.of(c) : OptionalInt.empty();
  }

  /** E.g. {@code HTTP 500: {"kind":"Status",...}} or {@code no answer: timeout}. */
  public static String describe(ApiException e) {
    if (e.getCode() == 0) {
      Throwable c = e.getCause();
      return "no answer ("
          + (c == null ? e.getMessage() : c.getClass().getSimpleName() + ": " + c.getMessage())
          + ")";
    }
    String body = e.getResponseBody();
    if (body != null && body.length() > 300) {
      body = body.substring(0, 300) + "...";
    }
    return "HTTP " + e.getCode() + (body == null || body.isEmpty() ? "" : ": " + body);
  }

  /** An {@link LockBackendException.Kind#INTERRUPTED} exception; restores the interrupt flag. */
  public static LockBackendException interrupted(String what) {
    Thread.currentThread().interrupt();
    return new LockBackendException(
        LockBackendException.Kind.INTERRUPTED, what + " was interrupted", null);
  }
}
