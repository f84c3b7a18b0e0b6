package dev.hamilock.k8s.lock;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.annotation.AnnotationLockStore;
import dev.hamilock.core.annotation.AnnotationTransport;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.k8s.internal.ApiFailures;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@link LockStore} on a Kubernetes Node annotation through client-java: core's {@link
 * AnnotationLockStore} (the patch bodies, the compare-and-set verdicts, the retries and the witness
 * rules, documented there) over client-java's raw HTTP. This class adds only the transport: one
 * {@code PATCH /api/v1/nodes/<node>} with the body as given, one {@code GET} parsed schema-free
 * (unknown fields never break a lock operation; a non-string annotation reads as its JSON text),
 * and each failure classified: status 0 for no answer, the {@code Retry-After} header, and whether
 * a 422 is a JSON patch that did not apply ({@link ApiFailures#isPatchNotApplicable}).
 *
 * <p>Every request has a finite whole-call timeout (default 10 s). Thread-safe.
 */
public final class NodeAnnotationLockStore implements LockStore {

  /** Default whole-call timeout of one request: 10 s. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

  /** Default attempts per operation (writes and reads): 5. */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;

  private final AnnotationLockStore store;

  private NodeAnnotationLockStore(AnnotationLockStore store) {
    this.store = store;
  }

  /**
   * @param apiClient the client (base path, credentials); its own timeouts are replaced by {@link
   *     Builder#requestTimeout(Duration)} for this store's calls
   * @return a builder (request timeout 10 s, 5 attempts, no release signal, no watched view)
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  @Override
  public Optional<LockReleaseSignal> releaseSignal() {
    return store.releaseSignal();
  }

  /** {@inheritDoc} Here: one GET of the node, no {@code resourceVersion} (a quorum read). */
  @Override
  public Optional<String> read(String node, String key) throws LockBackendException {
    return store.read(node, key);
  }

  /** {@inheritDoc} See {@link AnnotationLockStore#createIfAbsent}. */
  @Override
  public CasResult createIfAbsent(String node, String key, String value)
      throws LockBackendException {
    return store.createIfAbsent(node, key, value);
  }

  /** {@inheritDoc} See {@link AnnotationLockStore#replaceIfEquals}. */
  @Override
  public CasResult replaceIfEquals(String node, String key, String expected, String value)
      throws LockBackendException {
    return store.replaceIfEquals(node, key, expected, value);
  }

  /** {@inheritDoc} See {@link AnnotationLockStore#deleteIfEquals}. */
  @Override
  public boolean deleteIfEquals(String node, String key, String expected)
      throws LockBackendException {
    return store.deleteIfEquals(node, key, expected);
  }

  @Override
  public String toString() {
    return store.toString();
  }

  /** client-java's half: the raw PATCH and GET, failures classified. */
  private record Transport(KubeHttp http) implements AnnotationTransport {

    @Override
    public void patch(String node, boolean merge, String body) throws Failure {
      try {
        http.patch(path(node), merge ? KubeHttp.MERGE_PATCH : KubeHttp.JSON_PATCH, body);
      } catch (ApiException e) {
        throw failure(e);
      }
    }

    @Override
    public NodeAnnotations read(String node) throws Failure {
      JsonObject object;
      try {
        object = http.get(path(node));
      } catch (ApiException e) {
        throw failure(e);
      }
      JsonObject meta = object.get("metadata") instanceof JsonObject m ? m : new JsonObject();
      Map<String, String> annotations = null;
      if (meta.get("annotations") instanceof JsonObject a) {
        annotations = new HashMap<>();
        for (Map.Entry<String, JsonElement> e : a.entrySet()) {
          JsonElement v = e.getValue();
          if (!v.isJsonNull()) {
            annotations.put(e.getKey(), v.isJsonPrimitive() ? v.getAsString() : v.toString());
          }
        }
      }
      JsonElement rv = meta.get("resourceVersion");
      return new NodeAnnotations(
          annotations, rv != null && rv.isJsonPrimitive() ? rv.getAsString() : null);
    }

    private String path(String node) {
      return "/api/v1/nodes/" + http.escape(node);
    }

    private static Failure failure(ApiException e) {
      Map<String, List<String>> headers = e.getResponseHeaders();
      String retryAfter = null;
      if (headers != null) {
        for (Map.Entry<String, List<String>> h : headers.entrySet()) {
          if ("Retry-After".equalsIgnoreCase(h.getKey()) && !h.getValue().isEmpty()) {
            retryAfter = h.getValue().get(0);
          }
        }
      }
      return new Failure(
          e.getCode(),
          retryAfter,
          ApiFailures.isPatchNotApplicable(e),
          ApiFailures.isInterruption(e),
          ApiFailures.describe(e),
          e);
    }
  }

  /**
   * Builder for {@link NodeAnnotationLockStore}; validates in {@link #build()}. Not thread-safe.
   */
  public static final class Builder {
    private final ApiClient apiClient;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private LockReleaseSignal releaseSignal;
    private String watchedKey;
    private Function<String, Optional<String>> watchedValues;
    private Duration maxRetryAfter = Duration.ofSeconds(5);

    private Builder(ApiClient apiClient) {
      this.apiClient = apiClient;
    }

    /**
     * @param requestTimeout whole-call timeout of each request (default 10 s); positive
     * @return this builder
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    /**
     * @param maxAttempts attempts per write (repeats after certain non-application) and per read
     *     (transient failures), default 5; 1..100
     * @return this builder
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * @param maxRetryAfter cap on an honoured {@code Retry-After} of a 429 (default 5 s); not
     *     negative
     * @return this builder
     */
    public Builder maxRetryAfter(Duration maxRetryAfter) {
      this.maxRetryAfter = maxRetryAfter;
      return this;
    }

    /**
     * @param releaseSignal the signal {@link #releaseSignal()} reports (e.g. fed by a {@code
     *     NodeLockWatch}); {@code null} for none
     * @return this builder
     */
    public Builder releaseSignal(LockReleaseSignal releaseSignal) {
      this.releaseSignal = releaseSignal;
      return this;
    }

    /**
     * A watched view of one lock annotation (in this library the node watch's {@link
     * dev.hamilock.k8s.watch.NodeLockWatch#observedLockValue(String, String)}); see {@link
     * AnnotationLockStore.Builder#watchedLockValues}. Default: none (always GET).
     *
     * @param key the annotation key the view covers; other keys always GET; non-blank
     * @param valueByNode the watched value of {@code key} by node name; empty if absent or unknown
     * @return this builder
     */
    public Builder watchedLockValues(String key, Function<String, Optional<String>> valueByNode) {
      this.watchedKey = key;
      this.watchedValues = valueByNode;
      return this;
    }

    /**
     * @return the store
     * @throws NullPointerException naming the setting if the request timeout or maxRetryAfter is
     *     null, or a watched view was given with a null key or function
     * @throws IllegalArgumentException naming the setting if the request timeout is not positive,
     *     maxAttempts is outside 1..100, maxRetryAfter is negative, or a watched view was given
     *     with a blank key
     */
    public NodeAnnotationLockStore build() {
      Validation.positive("requestTimeout", requestTimeout);
      AnnotationLockStore.Builder b =
          AnnotationLockStore.builder(new Transport(new KubeHttp(apiClient, null, requestTimeout)))
              .maxAttempts(maxAttempts)
              .maxRetryAfter(maxRetryAfter)
              .releaseSignal(releaseSignal)
              .name("NodeAnnotationLockStore[requestTimeout=" + requestTimeout + "]");
      if (watchedKey != null || watchedValues != null) {
        b.watchedLockValues(watchedKey, watchedValues);
      }
      return new NodeAnnotationLockStore(b.build());
    }
  }
}
