package dev.hamilock.k8s.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.TestNode;
import dev.hamilock.testkit.TestPod;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.Pair;
import io.kubernetes.client.util.Config;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.Request;
import okio.Buffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link KubeHttp} builds its requests from {@code ApiClient}'s public steps instead of {@code
 * buildCall} (which needs an OkHttp package not exported on the module path). Each request it sends
 * must equal what {@code buildRequest} makes for the same call: URL with the escaped query, method,
 * every header (bearer token, default headers, user agent, content type) and body.
 */
class KubeHttpRequestTest {
  private static final String[] AUTH = {"BearerToken"};

  private final ApiServerEmulator k8s = ApiServerEmulator.start();
  private final List<Request> sent = new CopyOnWriteArrayList<>();
  private ApiClient client;
  private KubeHttp http;

  @AfterEach
  void stop() {
    k8s.close();
  }

  private void connect() {
    client = Config.fromToken(k8s.url(), "secret-token", false);
    client.setUserAgent("hami-lock-test/1");
    client.addDefaultHeader("X-Tenant", "team-a");
    client.setHttpClient(
        client
            .getHttpClient()
            .newBuilder()
            .addInterceptor(
                chain -> {
                  sent.add(chain.request());
                  return chain.proceed(chain.request());
                })
            .build());
    http = new KubeHttp(client, null, Duration.ofSeconds(10));
  }

  @Test
  void getWithQueryEqualsWhatBuildRequestMakes() throws Exception {
    k8s.createNode(TestNode.named("gpu-node-a").label("gpu", "on"));
    connect();
    List<Pair> query =
        List.of(new Pair("labelSelector", "gpu in (on,yes),!cordoned"), new Pair("limit", "5"));

    JsonObject list =
        KubeHttp.parseObject(new String(http.getBody("/api/v1/nodes", query), UTF_8)).orElseThrow();

    assertThat(list.getAsJsonArray("items")).hasSize(1);
    assertSame(sent.get(0), expected("/api/v1/nodes", "GET", query, null, null));
    assertThat(sent.get(0).header("Authorization")).isEqualTo("Bearer secret-token");
    assertThat(sent.get(0).url().queryParameter("labelSelector"))
        .isEqualTo("gpu in (on,yes),!cordoned");
  }

  @Test
  void patchesAndPostEqualWhatBuildRequestMakes() throws Exception {
    k8s.createPod(TestPod.named("default", "w-0"));
    connect();
    String merge = "{\"metadata\":{\"annotations\":{\"hami.io/bind-phase\":\"allocating\"}}}";
    String json = "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"a\":\"b\"}}]";
    byte[] binding =
        ("{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"w-0\"},"
                + "\"target\":{\"kind\":\"Node\",\"name\":\"gpu-node-a\"}}")
            .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    http.patchBody("/api/v1/namespaces/default/pods/w-0", KubeHttp.MERGE_PATCH, merge);
    http.patchBody("/api/v1/namespaces/default/pods/w-0", KubeHttp.JSON_PATCH, json);
    http.post("/api/v1/namespaces/default/pods/w-0/binding", binding);

    assertThat(sent).hasSize(3);
    assertSame(
        sent.get(0),
        expected(
            "/api/v1/namespaces/default/pods/w-0",
            "PATCH",
            List.of(),
            KubeHttp.MERGE_PATCH,
            new V1Patch(merge)));
    assertSame(
        sent.get(1),
        expected(
            "/api/v1/namespaces/default/pods/w-0",
            "PATCH",
            List.of(),
            KubeHttp.JSON_PATCH,
            new V1Patch(json)));
    assertSame(
        sent.get(2),
        expected(
            "/api/v1/namespaces/default/pods/w-0/binding",
            "POST",
            List.of(),
            "application/json",
            binding));
    assertThat(body(sent.get(0))).isEqualTo(merge);
    assertThat(
            k8s.get("pods", "default", "w-0").orElseThrow().path("spec").path("nodeName").asText())
        .isEqualTo("gpu-node-a");
  }

  /**
   * The raw-body reads (the bind ports parse them with JsonViews) send the same requests as the
   * Gson ones and fail the same way: same code, body and headers as client-java's execute.
   */
  @Test
  void rawBodyCallsSendTheSameRequestsAndFailTheSameWay() throws Exception {
    k8s.createPod(TestPod.named("default", "w-0"));
    connect();
    String merge = "{\"metadata\":{\"annotations\":{\"a\":\"b\"}}}";
    List<Pair> query = List.of(new Pair("fieldSelector", "spec.nodeName="));

    JsonObject viaGson =
        KubeHttp.parseObject(new String(http.getBody("/api/v1/pods", query), UTF_8)).orElseThrow();
    byte[] raw = http.getBody("/api/v1/pods", query);
    http.patchBody("/api/v1/namespaces/default/pods/w-0", KubeHttp.MERGE_PATCH, merge);
    http.patchBody("/api/v1/namespaces/default/pods/w-0", KubeHttp.MERGE_PATCH, merge);

    assertThat(
            com.google.gson.JsonParser.parseString(
                new String(raw, java.nio.charset.StandardCharsets.UTF_8)))
        .isEqualTo(viaGson);
    assertSame(sent.get(1), expected("/api/v1/pods", "GET", query, null, null));
    assertSame(
        sent.get(3),
        expected(
            "/api/v1/namespaces/default/pods/w-0",
            "PATCH",
            List.of(),
            KubeHttp.MERGE_PATCH,
            new V1Patch(merge)));

    io.kubernetes.client.openapi.ApiException gson =
        org.junit.jupiter.api.Assertions.assertThrows(
            io.kubernetes.client.openapi.ApiException.class,
            () -> http.get("/api/v1/namespaces/default/pods/gone"));
    io.kubernetes.client.openapi.ApiException bytes =
        org.junit.jupiter.api.Assertions.assertThrows(
            io.kubernetes.client.openapi.ApiException.class,
            () -> http.getBody("/api/v1/namespaces/default/pods/gone", List.of()));
    assertThat(bytes.getCode()).isEqualTo(404).isEqualTo(gson.getCode());
    assertThat(bytes.getResponseBody()).isEqualTo(gson.getResponseBody()).contains("NotFound");
    assertThat(bytes.getResponseHeaders().get("Content-Type"))
        .isEqualTo(gson.getResponseHeaders().get("Content-Type"));
    assertThat(bytes.getMessage()).isEqualTo(gson.getMessage());
  }

  @Test
  void watchCallEqualsWhatBuildRequestMakes() throws Exception {
    connect();
    List<Pair> query = List.of(new Pair("watch", "true"), new Pair("resourceVersion", "7"));
    Request watch = http.watchCall("/api/v1/nodes", query).request();
    assertSame(watch, expected("/api/v1/nodes", "GET", query, null, null));
  }

  private Request expected(
      String path, String method, List<Pair> query, String contentType, Object body)
      throws Exception {
    Map<String, String> headers = new HashMap<>();
    headers.put("Accept", "application/json");
    if (contentType != null) {
      headers.put("Content-Type", contentType);
    }
    return client.buildRequest(
        null,
        path,
        method,
        new ArrayList<>(query),
        new ArrayList<>(),
        body,
        headers,
        new HashMap<>(),
        new HashMap<>(),
        AUTH,
        null);
  }

  private static void assertSame(Request actual, Request expected) throws Exception {
    assertThat(actual.url()).isEqualTo(expected.url());
    assertThat(actual.method()).isEqualTo(expected.method());
    assertThat(actual.headers().toMultimap()).isEqualTo(expected.headers().toMultimap());
    assertThat(body(actual)).isEqualTo(body(expected));
    if (expected.body() != null) {
      assertThat(String.valueOf(actual.body().contentType()))
          .isEqualTo(String.valueOf(expected.body().contentType()));
    }
  }

  private static String body(Request r) throws Exception {
    if (r.body() == null) {
      return null;
    }
    Buffer b = new Buffer();
    r.body().writeTo(b);
    return b.readUtf8();
  }
}
