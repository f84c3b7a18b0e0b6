package dev.hamilock.fabric8.internal;

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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

/**
 * One raw request through fabric8's own HTTP client ({@code client.getHttpClient()}: its base URL,
 * credentials, TLS, interceptors; its repetitions of 5xx, 429 and connection failures bounded by
 * {@link #repeating}) with the client's {@code requestTimeout} as each attempt's timeout, its
 * failure classified as core's {@link Failure}. Shared by hami-lock-fabric8's lock store and
 * hami-lock-fabric8-bind's cluster ports; not part of the public API. Thread-safe.
 */
public final class Fabric8Http {

  private Fabric8Http() {}

  /**
   * @param client the fabric8 client
   * @param http its HTTP client as {@link #repeating} derived it
   * @param path the path under the master URL, without the leading slash, query included (already
   *     escaped)
   * @param request sets the method and body ({@code b -> b} for a GET)
   * @return the answer's body (2xx)
   * @throws Failure on any other answer, or none: the status (0 for none), {@code Retry-After}, for
   *     a 422 whether the patch did not apply, whether an interruption ended it
   */
  public static String send(
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
      KubernetesClient client,
      HttpClient http,
      String path,
      UnaryOperator<HttpRequest.Builder> request)
      throws Failure {
    String body = send(client, http, path, request);
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

  /**
   * The client's HTTP client with fabric8's own repetitions bounded: {@code retries} repetitions of
   * a request that failed to connect or answered 5xx or 429, 20 ms back-off doubling (the {@code
   * RequestConfig} tag its {@code StandardHttpClient} reads), whatever the client's {@code
   * requestRetryBackoffLimit} says. fabric8's default (10 repetitions from 100 ms, doubling) under
   * the lock store's own 5 attempts kept one acquire against an unreachable API server busy for
   * more than 200 s — far past kube-scheduler's 30 s extender timeout (a new user's run of the
   * README's snippet).
   *
   * @param client the fabric8 client
   * @param retries repetitions fabric8 may add (0: none, the caller retries)
   * @return a derived client sharing the client's connections and configuration
   */
  public static HttpClient repeating(KubernetesClient client, int retries) {
    RequestConfig rc =
        new RequestConfigBuilder(client.getConfiguration().getRequestConfig())
            .withRequestRetryBackoffLimit(retries)
            .withRequestRetryBackoffInterval(20)
            .build();
    return client.getHttpClient().newBuilder().tag(rc).build();
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
