package dev.hamilock.fabric8.internal;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeException;
import dev.failsafe.RetryPolicy;
import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusDetails;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

/**
 * One raw request through fabric8's own HTTP client ({@code client.getHttpClient()}: its base URL,
 * credentials, TLS, interceptors; none of its own repetitions) with the client's {@code
 * requestTimeout} as each attempt's timeout, repeated here as {@link #repeating} bounds it, its
 * failure classified as core's {@link Failure}. Shared by hami-lock-fabric8's lock store and
 * hami-lock-fabric8-bind's cluster ports; not part of the public API. Thread-safe.
 */
public final class Fabric8Http {

  /** The longest {@code Retry-After} honoured, as core's lock store and client-java's ports. */
  static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(5);

  private Fabric8Http() {}

  /**
   * A fabric8 client's HTTP client without fabric8's own repetitions, and how many {@link #send}
   * adds to a request that failed to connect or was answered 5xx or 429 ({@link #repeating}).
   *
   * @param client the fabric8 client
   * @param http its HTTP client, fabric8's repetitions off
   * @param retries repetitions {@link #send} adds, 0 for none
   */
  public record Requests(KubernetesClient client, HttpClient http, int retries) {}

  /**
   * The client's HTTP client with {@code retries} repetitions of a request that failed to connect
   * or was answered 5xx or 429: after the answer's {@code Retry-After} capped at 5 s, else 20 ms to
   * 1 s of back-off (Failsafe, client-java's ports' policy). fabric8's own repetitions are off,
   * whatever the client's {@code requestRetryBackoffLimit} says: through this client fabric8 8.0
   * repeated a 429 after 20 ms whatever its {@code Retry-After} said (API Priority and Fairness
   * asks for 1 s), and its default of 10 repetitions from 100 ms under the lock store's own 5
   * attempts kept one acquire against an unreachable API server busy for more than 200 s, far past
   * kube-scheduler's 30 s extender timeout (a new user's run of the README's snippet).
   *
   * @param client the fabric8 client
   * @param retries repetitions added (0: none, the caller retries)
   * @return requests over a derived client sharing the client's connections and configuration
   */
  public static Requests repeating(KubernetesClient client, int retries) {
    RequestConfig rc =
        new RequestConfigBuilder(client.getConfiguration().getRequestConfig())
            .withRequestRetryBackoffLimit(0)
            .build();
    return new Requests(client, client.getHttpClient().newBuilder().tag(rc).build(), retries);
  }

  /**
   * @param requests the client and its repetitions ({@link #repeating})
   * @param path the path under the master URL, without the leading slash, query included (already
   *     escaped)
   * @param request sets the method and body ({@code b -> b} for a GET)
   * @return the answer's body (2xx)
   * @throws Failure on any other answer, or none, after the repetitions: the status (0 for none),
   *     {@code Retry-After}, for a 422 whether the patch did not apply, whether an interruption
   *     ended it
   */
  public static String send(
      Requests requests, String path, UnaryOperator<HttpRequest.Builder> request) throws Failure {
    try {
      return Failsafe.with(POLICIES.computeIfAbsent(requests.retries(), Fabric8Http::policy))
          .get(() -> sendOnce(requests.client(), requests.http(), path, request));
    } catch (FailsafeException e) {
      if (e.getCause() instanceof Failure f) {
        throw f;
      }
      if (e.getCause() instanceof InterruptedException i) { // in the pause between attempts
        Thread.currentThread().interrupt();
        throw new Failure(0, null, false, true, "interrupted before repeating " + path, i);
      }
      throw e;
    }
  }

  /** Policies by repetitions: few (the callers use 0 and 4), each immutable and shared. */
  private static final Map<Integer, RetryPolicy<String>> POLICIES = new ConcurrentHashMap<>();

  /**
   * Repeats a transient failure (no answer, 429, 5xx), never an interrupted one nor one through a
   * closed client ({@code sendAsync}'s {@link IllegalStateException}: nothing was sent), after the
   * capped {@code Retry-After}, else 20 ms to 1 s of back-off: client-java's ports' policy ({@code
   * ApiFailures}) without its jitter, which Failsafe applies to the {@code Retry-After} too (a
   * {@code Retry-After: 1} was repeated after 0.86 s in {@code Fabric8ReadsRetryAfterTest}).
   */
  private static RetryPolicy<String> policy(int retries) {
    return RetryPolicy.<String>builder()
        .handleIf(
            e ->
                e instanceof Failure f
                    && f.isTransient()
                    && !f.isInterruption()
                    && !(f.getCause() instanceof IllegalStateException)
                    && !Thread.currentThread().isInterrupted())
        .withMaxRetries(retries)
        .withBackoff(Duration.ofMillis(20), Duration.ofSeconds(1))
        .withDelayFn(
            ctx ->
                ctx.getLastException() instanceof Failure f
                    ? f.retryAfter(MAX_RETRY_AFTER).orElse(Duration.ofMillis(-1))
                    : Duration.ofMillis(-1))
        .build();
  }

  private static String sendOnce(
      KubernetesClient client,
      HttpClient http,
      String path,
      UnaryOperator<HttpRequest.Builder> request)
      throws Failure {
    long timeout = client.getConfiguration().getRequestTimeout();
    String uri = client.getMasterUrl() + path;
    HttpRequest.Builder b = http.newHttpRequestBuilder().uri(uri);
    if (timeout > 0) {
      b.timeout(timeout, TimeUnit.MILLISECONDS);
    }
    HttpResponse<String> r;
    HttpRequest built = request.apply(b).build();
    CompletableFuture<HttpResponse<String>> call;
    try {
      call = http.sendAsync(built, String.class);
    } catch (IllegalStateException closed) { // the client was closed: nothing sent
      String why = "no answer from " + uri + " (" + closed.getMessage() + ")";
      throw new Failure(0, null, false, false, why, closed);
    }
    try {
      r = call.get();
    } catch (InterruptedException e) {
      // as client-java's blocking call, an interruption does not abandon a write in flight: its
      // answer, if one comes, is the call's (the flag stays set); returned at once, a write landed
      // after the caller's rollback had read the node (a lock left held for the lock timeout)
      r = "GET".equals(built.method()) ? cancel(call) : settle(call, timeout);
      Thread.currentThread().interrupt();
      if (r == null) {
        throw new Failure(0, null, false, true, "no answer (interrupted)", e);
      }
    } catch (ExecutionException e) {
      Throwable c = e.getCause() == null ? e : e.getCause();
      throw new Failure(
          0,
          null,
          false,
          false,
          "no answer from "
              + uri
              + " ("
              + c.getClass().getSimpleName()
              + (c.getMessage() == null ? "" : ": " + c.getMessage())
              + ")",
          c);
    }
    if (r.isSuccessful()) {
      return r.body();
    }
    String body = r.body() == null ? "" : r.body();
    Status status;
    try {
      status = client.getKubernetesSerialization().unmarshal(body, Status.class);
    } catch (RuntimeException notAStatus) {
      status = null;
    }
    throw new Failure(
        r.code(),
        r.header("Retry-After"),
        patchNotApplicable(status),
        false,
        "HTTP " + r.code() + (body.isEmpty() ? "" : ": " + abbreviate(body)),
        new KubernetesClientException("HTTP " + r.code(), r.code(), status));
  }

  private static <T> T cancel(CompletableFuture<T> call) {
    call.cancel(true);
    return null;
  }

  /**
   * The answer of {@code call}, waited for not interruptibly up to {@code timeout} ms (10 s if
   * none); {@code null} if it failed or did not come (then cancelled).
   */
  private static <T> T settle(CompletableFuture<T> call, long timeout) {
    long deadline =
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeout > 0 ? timeout : 10_000);
    while (true) {
      long left = deadline - System.nanoTime();
      try {
        return call.get(Math.max(left, 0), TimeUnit.NANOSECONDS);
      } catch (InterruptedException again) {
        // keep waiting; the caller restores the flag
      } catch (TimeoutException none) {
        call.cancel(true);
        return null;
      } catch (ExecutionException | CancellationException failed) {
        return null;
      }
    }
  }

  /**
   * {@link #send} whose 2xx answer must be a JSON object (a node, a pod).
   *
   * @return the object as maps, lists, strings, numbers and booleans
   * @throws Failure as {@link #send}, and for a 2xx whose body is no JSON object (a proxy's page):
   *     status 200, which core classifies as UNAVAILABLE, never an unchecked exception
   */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> sendForObject(
      Requests requests, String path, UnaryOperator<HttpRequest.Builder> request) throws Failure {
    KubernetesClient client = requests.client();
    String body = send(requests, path, request);
    Object object = null;
    Exception why = null;
    if (body != null && body.stripLeading().startsWith("{")) { // not YAML: fabric8 would take it
      try {
        object = client.getKubernetesSerialization().unmarshal(body, Map.class);
      } catch (RuntimeException e) {
        why = e;
      }
    }
    if (object instanceof Map<?, ?> map) {
      return (Map<String, Object>) map;
    }
    String text = body == null ? "" : body;
    throw new Failure(
        200,
        null,
        false,
        false,
        "HTTP 2xx with a body that is no JSON object: " + abbreviate(text),
        why);
  }

  private static String abbreviate(String body) {
    return body.length() > 300 ? body.substring(0, 300) + "..." : body;
  }

  /** {@link Failure#patchNotApplicable} of a 422's {@code v1.Status} ({@code null}: none). */
  public static boolean patchNotApplicable(Status status) {
    StatusDetails d = status == null ? null : status.getDetails();
    return d == null
        || Failure.patchNotApplicable(
            d.getName(),
            d.getCauses() == null // "causes":null read as none, as hami-lock-k8s reads it
                ? List.of()
                : d.getCauses().stream().map(c -> c == null ? null : c.getField()).toList());
  }
}
