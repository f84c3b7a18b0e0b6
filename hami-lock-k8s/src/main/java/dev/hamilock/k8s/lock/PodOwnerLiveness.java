package dev.hamilock.k8s.lock;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.k8s.internal.ApiFailures;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * {@link OwnerLiveness} by a live pod GET (never a cache): 404 is {@link State#NOT_FOUND} (as
 * HAMi's {@code nodelock.go} LockNode), else {@link HolderStatus#ofPod}; any other failure, after
 * retries, is a {@link LockBackendException}, never "gone". Thread-safe.
 */
public final class PodOwnerLiveness implements OwnerLiveness {

  private final KubeHttp http;
  private final ApiFailures failures;

  private PodOwnerLiveness(KubeHttp http, ApiFailures failures) {
    this.http = http;
    this.failures = failures;
  }

  /**
   * The check on {@code apiClient}: whole-call {@code requestTimeout}, {@code maxAttempts}
   * (1..100).
   *
   * @throws NullPointerException naming the argument if one is null
   * @throws IllegalArgumentException naming the argument and value if one is out of range
   */
  public static PodOwnerLiveness create(
      ApiClient apiClient, Duration requestTimeout, int maxAttempts) {
    Objects.requireNonNull(apiClient, "apiClient");
    Validation.positive("requestTimeout", requestTimeout);
    Validation.attempts("maxAttempts", maxAttempts);
    return new PodOwnerLiveness(
        new KubeHttp(apiClient, null, requestTimeout),
        new ApiFailures(
            maxAttempts, Duration.ofMillis(20), Duration.ofSeconds(1), Duration.ofSeconds(5)));
  }

  @Override
  public State check(LockOwner owner) throws LockBackendException {
    return status(owner).state();
  }

  /** {@inheritDoc} Here: the same single GET; a NotFound pod (or other UID) has no details. */
  @Override
  public HolderStatus status(LockOwner owner) throws LockBackendException {
    Objects.requireNonNull(owner, "owner");
    String path =
        "/api/v1/namespaces/"
            + http.escape(owner.namespace())
            + "/pods/"
            + http.escape(owner.name());
    JsonObject pod;
    try {
      pod = failures.read(() -> http.get(path));
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return HolderStatus.of(State.NOT_FOUND);
      }
      throw ApiFailures.toBackend(
          e,
          "GET pod " + owner.namespace() + "/" + owner.name(),
          LockBackendException.Kind.REJECTED);
    } catch (InterruptedException e) {
      throw ApiFailures.interrupted("GET pod " + owner);
    }
    JsonObject meta = object(pod, "metadata").orElseGet(JsonObject::new);
    return HolderStatus.ofPod(
        owner,
        string(meta, "uid").orElse(null),
        object(pod, "status").flatMap(s -> string(s, "phase")).orElse(null),
        object(pod, "spec").flatMap(s -> string(s, "nodeName")).orElse(null),
        object(meta, "annotations").flatMap(a -> string(a, BindPhase.ANNOTATION)).orElse(null),
        string(meta, "deletionTimestamp").isPresent());
  }

  @Override
  public String toString() {
    return "PodOwnerLiveness[requestTimeout=" + http.requestTimeout() + "]";
  }

  private static Optional<JsonObject> object(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e != null && e.isJsonObject() ? Optional.of(e.getAsJsonObject()) : Optional.empty();
  }

  private static Optional<String> string(JsonObject o, String field) {
    JsonElement e = o.get(field);
    return e != null && e.isJsonPrimitive() ? Optional.of(e.getAsString()) : Optional.empty();
  }
}
