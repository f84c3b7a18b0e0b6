package dev.hamilock.k8s.internal;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonSyntaxException;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Raw, schema-free requests over a client-java {@link ApiClient} (answers as {@link JsonObject}s,
 * so unknown fields never fail a call; kube-api-notes §4.2), built from its public request steps
 * ({@code buildCall} needs an OkHttp package not exported on the module path). Calls have a
 * whole-call timeout (a lost answer is code 0); writes run with {@code
 * retryOnConnectionFailure(false)}, as OkHttp would silently resend a PATCH whose answer was lost,
 * while GETs keep OkHttp's retry of a stale pooled connection. Watches use a client without read
 * timeout. Not part of the public API. Thread-safe.
 */
public final class KubeHttp {

  /** Content type of RFC 6902 JSON Patch. */
  public static final String JSON_PATCH = V1Patch.PATCH_FORMAT_JSON_PATCH;

  /** Content type of RFC 7386 JSON merge patch. */
  public static final String MERGE_PATCH = V1Patch.PATCH_FORMAT_JSON_MERGE_PATCH;

  private static final String[] AUTH = {"BearerToken"};

  private final ApiClient apiClient;
  private final OkHttpClient requestHttp;
  private final OkHttpClient readHttp;
  private final OkHttpClient watchHttp;
  private final Duration requestTimeout;

  /**
   * A {@code null} {@code watchClient} derives the watches' client from {@code apiClient}; {@code
   * requestTimeout} is the whole-call timeout of request/response calls.
   */
  public KubeHttp(ApiClient apiClient, ApiClient watchClient, Duration requestTimeout) {
    this.apiClient = Objects.requireNonNull(apiClient, "apiClient");
    this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
    this.requestHttp =
        apiClient
            .getHttpClient()
            .newBuilder()
            .retryOnConnectionFailure(false)
            .callTimeout(requestTimeout)
            .build();
    this.readHttp = requestHttp.newBuilder().retryOnConnectionFailure(true).build();
    OkHttpClient base =
        watchClient == null ? apiClient.getHttpClient() : watchClient.getHttpClient();
    this.watchHttp =
        base.newBuilder().readTimeout(Duration.ZERO).callTimeout(Duration.ZERO).build();
  }

  /** The whole-call timeout of request/response calls. */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  /**
   * GET of one object, e.g. {@code /api/v1/nodes/node-a}.
   *
   * @throws ApiException non-2xx (code, headers, body), I/O failure (code 0), or a 2xx whose body
   *     is no JSON object (code 200, the body abbreviated): never Gson's unchecked exception
   */
  public JsonObject get(String path) throws ApiException {
    byte[] body = executeRaw(call(path, "GET", List.of(), null, null));
    String text = new String(body, StandardCharsets.UTF_8);
    return parseObject(text)
        .orElseThrow(
            () -> // a 2xx no JSON object (a proxy's page): as client-java fails an answer
            new ApiException(
                    "response body is not a JSON object", 200, Map.of(), abbreviate(text)));
  }

  /** POST of UTF-8 JSON (never retried here): the 2xx answer's body; fails as GET. */
  public byte[] post(String path, byte[] body) throws ApiException {
    return executeRaw(call(path, "POST", List.of(), "application/json", body));
  }

  /** GET whose answer body is returned as is; fails as {@link #get(String)}. */
  public byte[] getBody(String path, List<Pair> query) throws ApiException {
    return executeRaw(call(path, "GET", query, null, null));
  }

  /**
   * PATCH ({@link #JSON_PATCH} or {@link #MERGE_PATCH}) whose answer body is returned as is (see
   * {@link #getBody}); fails as GET.
   */
  public byte[] patchBody(String path, String contentType, String body) throws ApiException {
    return executeRaw(call(path, "PATCH", List.of(), contentType, new V1Patch(body)));
  }

  /** A watch call, not executed, without read timeout; the caller cancels it to stop. */
  public Call watchCall(String path, List<Pair> query) throws ApiException {
    return watchHttp.newCall(request(path, "GET", query, null, null));
  }

  /** The JSON object of one line, empty if it is none. */
  public static Optional<JsonObject> parseObject(String line) {
    try {
      JsonElement e = JsonParser.parseString(line);
      return e.isJsonObject() ? Optional.of(e.getAsJsonObject()) : Optional.empty();
    } catch (JsonSyntaxException | IllegalStateException e) {
      return Optional.empty();
    }
  }

  private Call call(String path, String method, List<Pair> query, String contentType, Object body)
      throws ApiException {
    Call c =
        ("GET".equals(method) ? readHttp : requestHttp)
            .newCall(request(path, method, query, contentType, body));
    c.timeout().timeout(requestTimeout.toNanos(), TimeUnit.NANOSECONDS);
    return c;
  }

  /** The request {@code ApiClient.buildCall} would build, from its public steps. */
  private Request request(
      String path, String method, List<Pair> query, String contentType, Object body)
      throws ApiException {
    Map<String, String> headers = new HashMap<>();
    headers.put("Accept", "application/json");
    if (contentType != null) {
      headers.put("Content-Type", contentType);
    }
    List<Pair> queryParams = new ArrayList<>(query);
    RequestBody requestBody = body == null ? null : apiClient.serialize(body, contentType);
    String url = apiClient.buildUrl(null, path, queryParams, List.of());
    Map<String, String> cookies = new HashMap<>();
    apiClient.updateParamsForAuth(
        AUTH, queryParams, headers, cookies, payload(body), method, URI.create(url));
    Request.Builder b =
        new Request.Builder().url(apiClient.buildUrl(null, path, queryParams, List.of()));
    apiClient.processHeaderParams(headers, b);
    apiClient.processCookieParams(cookies, b);
    return b.method(method, requestBody).build();
  }

  private static String payload(Object body) {
    if (body instanceof byte[] json) {
      return new String(json, StandardCharsets.UTF_8);
    }
    return body instanceof V1Patch p ? p.getValue() : body == null ? null : body.toString();
  }

  /** The 2xx answer's body, failing as client-java's {@code handleResponse}. */
  private byte[] executeRaw(Call call) throws ApiException {
    try (Response r = call.execute()) {
      ResponseBody b = r.body();
      byte[] body = b == null ? new byte[0] : b.bytes();
      if (!r.isSuccessful()) {
        throw new ApiException(
            r.message(),
            r.code(),
            r.headers().toMultimap(),
            new String(body, StandardCharsets.UTF_8));
      }
      return body;
    } catch (ApiException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw noAnswer(e);
    }
  }

  /**
   * A call without answer: code 0. OkHttp 5 may throw an undeclared InterruptedException while
   * connecting: reported as an interrupted I/O, the flag restored.
   */
  private static ApiException noAnswer(Exception e) {
    if (!(e instanceof InterruptedException)) {
      return new ApiException(e);
    }
    Thread.currentThread().interrupt();
    InterruptedIOException io = new InterruptedIOException("request interrupted");
    io.initCause(e);
    return new ApiException(io);
  }

  private static String abbreviate(String body) {
    return body.length() > 300 ? body.substring(0, 300) + "..." : body;
  }

  /** The escaped path segment, as the generated APIs escape names. */
  public String escape(String segment) {
    return apiClient.escapeString(segment);
  }
}
