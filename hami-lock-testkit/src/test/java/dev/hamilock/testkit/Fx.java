package dev.hamilock.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.PatchUtils;
import java.io.IOException;
import java.util.Map;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/** Test fixture: an emulator plus client-java helpers that turn every answer into an {@link Outcome}. */
final class Fx implements AutoCloseable {
  static final ObjectMapper MAPPER = new ObjectMapper();
  static final String LOCK = "hami.io/mutex.lock";
  static final String P = "/metadata/annotations/hami.io~1mutex.lock";

  final ApiServerEmulator emu;
  final ApiClient client;
  final CoreV1Api api;

  Fx() {
    this(ApiServerEmulator.start());
  }

  Fx(ApiServerEmulator emu) {
    this.emu = emu;
    this.client = emu.apiClient();
    this.api = new CoreV1Api(client);
  }

  /** HTTP status, Status reason (if the body is a Status) and body. */
  record Outcome(int code, String reason, JsonNode body) {
    static Outcome of(int code, String body) {
      JsonNode n;
      try {
        n = body == null || body.isEmpty() ? MAPPER.nullNode() : MAPPER.readTree(body);
      } catch (IOException e) {
        n = MAPPER.getNodeFactory().textNode(body);
      }
      return new Outcome(code, n.path("reason").asText(""), n);
    }

    static Outcome of(ApiException e) {
      return of(e.getCode(), e.getResponseBody());
    }
  }

  interface ApiCall {
    Object run() throws ApiException;
  }

  /** Runs a typed call; 2xx = success code given, ApiException = its code and body. */
  static Outcome typed(int successCode, ApiCall call) {
    try {
      Object o = call.run();
      return new Outcome(successCode, "", MAPPER.valueToTree(Map.of("result", String.valueOf(o))));
    } catch (ApiException e) {
      return Outcome.of(e);
    }
  }

  /** A raw request over client-java's OkHttp client. */
  Outcome raw(String method, String path, String contentType, String body) throws IOException {
    RequestBody rb = body == null ? null : RequestBody.create(body, MediaType.get(contentType));
    if (rb == null && (method.equals("POST") || method.equals("PUT") || method.equals("PATCH"))) {
      rb = RequestBody.create(new byte[0]);
    }
    Request.Builder b = new Request.Builder().url(emu.url() + path).method(method, rb);
    if (contentType != null && body == null) {
      b.header("Content-Type", contentType);
    }
    try (Response r = client.getHttpClient().newCall(b.build()).execute()) {
      return Outcome.of(r.code(), r.body() == null ? "" : r.body().string());
    }
  }

  /** PATCH a node through {@link PatchUtils} with the given format (strict typed V1Node result). */
  Outcome patchNode(String name, String format, String patch) {
    return typed(200, () -> PatchUtils.patch(V1Node.class,
        () -> api.patchNode(name, new V1Patch(patch)).buildCall(null), format, client));
  }

  Outcome patchPod(String ns, String name, String format, String patch) {
    return typed(200, () -> PatchUtils.patch(V1Pod.class,
        () -> api.patchNamespacedPod(name, ns, new V1Patch(patch)).buildCall(null), format, client));
  }

  JsonNode node(String name) {
    return emu.get("nodes", null, name).orElseThrow();
  }

  String rv(String name) {
    return node(name).path("metadata").path("resourceVersion").asText();
  }

  String ann(String name, String key) {
    JsonNode v = node(name).path("metadata").path("annotations").get(key);
    return v == null ? null : v.asText();
  }

  @Override
  public void close() {
    emu.close();
  }
}
