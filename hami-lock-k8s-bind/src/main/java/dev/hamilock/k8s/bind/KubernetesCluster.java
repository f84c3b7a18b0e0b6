package dev.hamilock.k8s.bind;

import static dev.hamilock.core.internal.Checks.requireNonBlank;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.KubernetesReads;
import dev.hamilock.bind.cluster.KubernetesWire;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.k8s.internal.ApiFailures;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster ports ({@link ClusterReader}, {@link ClusterWriter}) over client-java, as raw,
 * schema-free calls with the {@link ApiClient}'s base path, credentials and TLS: unknown fields of
 * a newer API server never fail a call (kube-api-notes §4.2), the Binding's {@code v1.Status}
 * answer is read as what it is (§2, kubernetes#140490), patches carry {@code
 * application/merge-patch+json} (§4.1), every request has a finite whole-call timeout (§4.8) and
 * OkHttp never silently re-sends one whose answer was lost. Reads send no {@code resourceVersion}
 * (consistent reads, as {@link ClusterReader} requires); requests as {@link KubernetesReads} and
 * {@link KubernetesWire}.
 *
 * <p><b>Failures.</b> Reads retry timeouts, connection failures, 429 (honouring {@code
 * Retry-After}, capped at 5 s) and 5xx with jittered back-off up to {@code maxAttempts}; then
 * {@link ClusterException.Kind#UNAVAILABLE}. Writes retry only 429 (certainly not applied); a
 * timeout or 5xx on a write is UNAVAILABLE at once (it may have been applied; the bind flow
 * re-reads). The final failure is classified as the lock's store classifies it ({@link
 * ApiFailures#kind}); an interruption keeps the thread's interrupt flag set. No unchecked exception
 * escapes for API or data problems.
 *
 * <p>Thread-safe; one instance per {@code ApiClient} serves any number of threads.
 */
public final class KubernetesCluster extends KubernetesReads implements ClusterWriter {
  private static final Logger LOG = LoggerFactory.getLogger(KubernetesCluster.class);

  /** Default whole-call timeout of one request: 10 s (below the extender's 30 s HTTP timeout). */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

  /** Default attempts of a read (and of a write answered 429): 5. */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;

  private final KubeHttp http;
  private final ApiFailures failures;

  private KubernetesCluster(ApiClient apiClient, Duration requestTimeout, int maxAttempts) {
    this.http = new KubeHttp(apiClient, null, requestTimeout);
    this.failures =
        new ApiFailures(
            maxAttempts, Duration.ofMillis(20), Duration.ofSeconds(1), Duration.ofSeconds(5));
  }

  /**
   * @return a cluster with a 10 s request timeout and 5 read attempts
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static KubernetesCluster create(ApiClient apiClient) {
    return create(apiClient, DEFAULT_REQUEST_TIMEOUT, DEFAULT_MAX_ATTEMPTS);
  }

  /**
   * @param requestTimeout whole-call timeout of each request (a Binding without answer within it is
   *     {@link BindingPostResult.Kind#AMBIGUOUS})
   * @param maxAttempts attempts of a read on transient failures and of a write answered 429; 1..100
   * @throws NullPointerException if {@code apiClient} is null
   * @throws IllegalArgumentException naming the setting: request timeout null or not positive,
   *     maxAttempts outside 1..100
   */
  public static KubernetesCluster create(
      ApiClient apiClient, Duration requestTimeout, int maxAttempts) {
    Objects.requireNonNull(apiClient, "apiClient");
    Validation.positive("requestTimeout", requestTimeout);
    Validation.attempts("maxAttempts", maxAttempts);
    return new KubernetesCluster(apiClient, requestTimeout, maxAttempts);
  }

  /** {@return the whole-call timeout of every request} */
  public Duration requestTimeout() {
    return http.requestTimeout();
  }

  /** {@inheritDoc} The body of {@link KubernetesWire#mergePatch}; retried only on 429. */
  @Override
  public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
      throws ClusterException {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    Objects.requireNonNull(patch, "patch");
    String what = "PATCH pod " + namespace + "/" + name;
    String body = KubernetesWire.mergePatch(patch);
    String path = "/" + podPath(namespace, name);
    JsonNode answer =
        fetch(
                what,
                () -> failures.write(() -> http.patchBody(path, KubeHttp.MERGE_PATCH, body)),
                false)
            .orElseThrow();
    return KubernetesWire.pod(what, answer);
  }

  /**
   * {@inheritDoc} The answer is mapped by {@link KubernetesWire#bindingAnswer}; an interruption or
   * an answer the client cannot read is AMBIGUOUS (interrupt flag restored).
   */
  @Override
  public BindingPostResult bind(
      String namespace, String name, String uid, String resourceVersion, String node) {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    requireNonBlank(node, "node");
    Objects.requireNonNull(uid, "uid");
    Objects.requireNonNull(resourceVersion, "resourceVersion");
    String what = "binding pod " + namespace + "/" + name + " to node " + node;
    try {
      http.post(
          "/" + podPath(namespace, name) + "/binding",
          utf8(KubernetesWire.binding(namespace, name, uid, resourceVersion, node)));
      return BindingPostResult.bound();
    } catch (ApiException e) {
      return bindingFailure(namespace, name, what, e);
    } catch (RuntimeException e) { // e.g. an unparsable 2xx: a re-read tells whether it applied
      LOG.debug("{}: unexpected client failure: {}", what, e.toString());
      return BindingPostResult.ambiguous(what + ": unexpected client failure: " + e)
          .withAnswer(java.util.OptionalInt.empty(), e);
    }
  }

  private BindingPostResult bindingFailure(
      String namespace, String name, String what, ApiException e) {
    if (ApiFailures.isInterruption(e)) {
      Thread.currentThread().interrupt();
      return BindingPostResult.ambiguous(what + " was interrupted: " + ApiFailures.describe(e))
          .withAnswer(ApiFailures.httpStatus(e), e);
    }
    return KubernetesWire.bindingAnswer(
        e.getCode(),
        e.getResponseBody() == null ? "" : e.getResponseBody(),
        what,
        ApiFailures.describe(e),
        e,
        () -> readPod(namespace, name).flatMap(ClusterPod::nodeName));
  }

  private static byte[] utf8(String json) {
    return json.getBytes(StandardCharsets.UTF_8);
  }

  /** A read through {@link ApiFailures#read}. */
  @Override
  protected Optional<JsonNode> get(
      String what, String path, Map<String, String> query, boolean notFoundIsEmpty)
      throws ClusterException {
    List<Pair> pairs =
        query.entrySet().stream().map(e -> new Pair(e.getKey(), e.getValue())).toList();
    return fetch(what, () -> failures.read(() -> http.getBody("/" + path, pairs)), notFoundIsEmpty);
  }

  @Override
  protected String escape(String segment) {
    return http.escape(segment);
  }

  /** A call of {@code failures} answering an object; 404 ⇒ empty if {@code notFoundIsEmpty}. */
  private Optional<JsonNode> fetch(String what, Retried call, boolean notFoundIsEmpty)
      throws ClusterException {
    try {
      return Optional.of(JsonViews.readObject(call.run()));
    } catch (MalformedObjectException e) {
      throw new ClusterException(
          ClusterException.Kind.UNAVAILABLE, what + ": unreadable answer: " + e.getMessage(), e);
    } catch (ApiException e) {
      if (notFoundIsEmpty && e.getCode() == 404) {
        return Optional.empty();
      }
      throw failure(what, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ClusterException(ClusterException.Kind.INTERRUPTED, what + " was interrupted", e);
    } catch (RuntimeException e) {
      throw new ClusterException(
          ClusterException.Kind.UNAVAILABLE, what + ": unreadable answer: " + e, e);
    }
  }

  /** One {@code POST .../pods/{name}/eviction} ({@link KubernetesWire#eviction}), not retried. */
  @Override
  public void evictPod(String namespace, String name, String uid) throws ClusterException {
    String what = "evicting pod " + requireNonBlank(namespace, "namespace") + "/" + name;
    try {
      http.post(
          "/" + podPath(namespace, requireNonBlank(name, "name")) + "/eviction",
          utf8(KubernetesWire.eviction(namespace, name, uid)));
    } catch (ApiException e) {
      throw failure(what, e);
    }
  }

  /**
   * One {@code POST /api/v1/namespaces/{namespace}/events} of {@link KubernetesWire#podEvent}.
   * Needs RBAC {@code create} on {@code events}.
   */
  @Override
  public void recordPodEvent(
      String namespace, String name, String uid, String type, String reason, String message)
      throws ClusterException {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    String what = "recording event " + reason + " on pod " + namespace + "/" + name;
    try {
      http.post(
          "/api/v1/namespaces/" + http.escape(namespace) + "/events",
          utf8(
              KubernetesWire.podEvent(
                  namespace, name, uid, type, reason, message, java.time.Instant.now())));
    } catch (ApiException e) {
      throw failure(what, e);
    } catch (RuntimeException e) {
      throw new ClusterException(ClusterException.Kind.UNAVAILABLE, what + ": " + e, e);
    }
  }

  /** A final failure, classified as the lock's store classifies it. */
  static ClusterException failure(String what, ApiException e) {
    return new ClusterException(
        ApiFailures.kind(e),
        what + " failed: " + ApiFailures.describe(e),
        e,
        ApiFailures.httpStatus(e));
  }

  /** A call through {@link ApiFailures#read} or {@link ApiFailures#write}. */
  private interface Retried {
    byte[] run() throws ApiException, InterruptedException;
  }

  @Override
  public String toString() {
    return "KubernetesCluster[requestTimeout=" + http.requestTimeout() + "]";
  }
}
