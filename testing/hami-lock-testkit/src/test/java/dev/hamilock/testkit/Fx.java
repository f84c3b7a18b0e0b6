package dev.hamilock.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kubernetes.client.custom.V1Patch;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.util.PatchUtils;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Test fixture: a {@link KubeBackend} (a fresh emulator by default, or the shared real server) plus
 * client-java helpers that turn every answer into an {@link Outcome}, and the observations a
 * conformance row records for the differential comparison ({@link #observe}).
 */
final class Fx implements AutoCloseable {
  static final ObjectMapper MAPPER = new ObjectMapper();
  static final String LOCK = "hami.io/mutex.lock";
  static final String P = "/metadata/annotations/hami.io~1mutex.lock";

  /**
   * The second namespace rows use (created once on the real server: namespaces are never deleted
   * there).
   */
  static final String TEAM = "team";

  /** The backend. */
  final KubeBackend k;

  /** The emulator, or null on the real server (rows that need it are emulator-only). */
  final ApiServerEmulator emu;

  final ApiClient client;
  final CoreV1Api api;
  private final boolean owned;
  private final Map<String, JsonNode> observed = new LinkedHashMap<>();

  Fx() {
    this(ApiServerEmulator.start());
  }

  Fx(ApiServerEmulator emu) {
    this(emu, true);
  }

  /**
   * @return a fixture on a fresh emulator sending bookmarks every second (conformance rows)
   */
  static Fx forConformance() {
    return new Fx(
        ApiServerEmulator.builder()
            .bookmarkInterval(java.time.Duration.ofSeconds(1))
            .servingDra(true)
            .start());
  }

  /**
   * @param backend the backend
   * @param owned whether {@link #close()} closes it
   */
  Fx(KubeBackend backend, boolean owned) {
    this.k = backend;
    this.emu = backend instanceof ApiServerEmulator e ? e : null;
    this.owned = owned;
    this.client = backend.apiClient();
    this.api = new CoreV1Api(client);
  }

  /**
   * @return whether this runs on the real kube-apiserver
   */
  boolean real() {
    return emu == null;
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

  /**
   * Runs a typed call; 2xx = success code given (body: the object as JSON), ApiException = its code
   * and body.
   */
  static Outcome typed(int successCode, ApiCall call) {
    try {
      Object o = call.run();
      JsonNode body;
      try {
        body = MAPPER.readTree(io.kubernetes.client.openapi.JSON.serialize(o));
      } catch (IOException | RuntimeException e) {
        body = MAPPER.getNodeFactory().textNode(String.valueOf(o));
      }
      return new Outcome(successCode, "", body);
    } catch (ApiException e) {
      return Outcome.of(e);
    }
  }

  /** A raw request over client-java's OkHttp client (path relative to the server's base URL). */
  Outcome raw(String method, String path, String contentType, String body) throws IOException {
    RequestBody rb = body == null ? null : RequestBody.create(body, MediaType.get(contentType));
    if (rb == null && (method.equals("POST") || method.equals("PUT") || method.equals("PATCH"))) {
      rb = RequestBody.create(new byte[0]);
    }
    Request.Builder b = new Request.Builder().url(client.getBasePath() + path).method(method, rb);
    if (contentType != null && body == null) {
      b.header("Content-Type", contentType);
    }
    try (Response r = client.getHttpClient().newCall(b.build()).execute()) {
      return Outcome.of(r.code(), r.body() == null ? "" : r.body().string());
    }
  }

  /** PATCH a node through {@link PatchUtils} with the given format (strict typed V1Node result). */
  Outcome patchNode(String name, String format, String patch) {
    return typed(
        200,
        () ->
            PatchUtils.patch(
                V1Node.class,
                () -> api.patchNode(name, new V1Patch(patch)).buildCall(null),
                format,
                client));
  }

  Outcome patchPod(String ns, String name, String format, String patch) {
    return typed(
        200,
        () ->
            PatchUtils.patch(
                V1Pod.class,
                () -> api.patchNamespacedPod(name, ns, new V1Patch(patch)).buildCall(null),
                format,
                client));
  }

  JsonNode node(String name) {
    return k.get("nodes", null, name).orElseThrow();
  }

  String rv(String name) {
    return node(name).path("metadata").path("resourceVersion").asText();
  }

  String ann(String name, String key) {
    JsonNode v = node(name).path("metadata").path("annotations").get(key);
    return v == null ? null : v.asText();
  }

  /**
   * @return the store's current revision: the emulator's, or etcd's on the real server (which has
   *     background writes of its own, so only lower bounds hold there)
   */
  long revision() {
    return emu != null ? emu.revision() : ((RealApiServer) k).etcdRevision();
  }

  /**
   * Creates a pod already placed on a node (spec.nodeName set at create, which both servers allow;
   * an update cannot set it on the real server).
   */
  JsonNode createPodOn(String ns, String name, String node, Map<String, String> labels) {
    Map<String, Object> meta = new LinkedHashMap<>(Map.of("name", name, "namespace", ns));
    if (!labels.isEmpty()) {
      meta.put("labels", labels);
    }
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("containers", List.of(Map.of("name", "main", "image", "busybox")));
    if (node != null) {
      spec.put("nodeName", node);
    }
    return k.create(Map.of("apiVersion", "v1", "kind", "Pod", "metadata", meta, "spec", spec));
  }

  /**
   * Turns observations into trees with every map's keys sorted: {@code DifferentialConformanceTest}
   * writes them to the tracked CONFORMANCE.md in tree order, and a {@code Map.of}'s iteration order
   * changes from one JVM to the next (the {@code "kind"}/{@code "namespaced"} keys of row 83
   * swapped between runs).
   */
  private static final ObjectMapper OBSERVATIONS =
      new ObjectMapper().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

  /** Records an observation compared between the backends (volatile values are normalised). */
  Fx observe(String key, Object value) {
    JsonNode n = observation(value);
    observed.put(key, n == null || n.isMissingNode() ? MAPPER.nullNode() : n);
    return this;
  }

  /**
   * @return {@code value} as a tree; a map's keys (nested maps' too) in sorted order, so the
   *     written table does not depend on a map's iteration order
   */
  static JsonNode observation(Object value) {
    return value instanceof JsonNode j ? j : OBSERVATIONS.valueToTree(value);
  }

  /**
   * @return the observations recorded so far
   */
  Map<String, JsonNode> observations() {
    return observed;
  }

  /**
   * The stored state the rows touch, for comparison after a row: every node's annotations and
   * labels, every pod's (namespaces default and team) node, annotations, labels and condition
   * types, every configmap's finalizers and deletion mark (kube-system and kube-* objects left
   * out).
   */
  ObjectNode state() {
    ObjectNode out = MAPPER.createObjectNode();
    ObjectNode nodes = out.putObject("nodes");
    for (JsonNode n : sorted(k.list("nodes", null))) {
      ObjectNode s = nodes.putObject(n.path("metadata").path("name").asText());
      copy(n.path("metadata"), s, "annotations", "labels");
    }
    ObjectNode pods = out.putObject("pods");
    for (String ns : List.of("default", TEAM)) {
      for (JsonNode p : sorted(k.list("pods", ns))) {
        ObjectNode s = pods.putObject(ns + "/" + p.path("metadata").path("name").asText());
        copy(p.path("metadata"), s, "annotations", "labels");
        s.put("nodeName", p.path("spec").path("nodeName").asText(""));
        ArrayNode conds = s.putArray("conditions");
        p.path("status")
            .path("conditions")
            .forEach(c -> conds.add(c.path("type").asText() + "=" + c.path("status").asText()));
      }
    }
    ObjectNode cms = out.putObject("configmaps");
    for (JsonNode c : sorted(k.list("configmaps", "default"))) {
      String name = c.path("metadata").path("name").asText();
      if (name.startsWith("kube-")) {
        continue;
      }
      ObjectNode s = cms.putObject(name);
      copy(c.path("metadata"), s, "finalizers");
      s.put("deleting", c.path("metadata").has("deletionTimestamp"));
    }
    return out;
  }

  private static List<JsonNode> sorted(List<JsonNode> l) {
    Map<String, JsonNode> m = new TreeMap<>();
    l.forEach(n -> m.put(n.path("metadata").path("name").asText(), n));
    return List.copyOf(m.values());
  }

  private static void copy(JsonNode from, ObjectNode to, String... fields) {
    for (String f : fields) {
      if (from.has(f) && !from.get(f).isEmpty()) {
        to.set(f, from.get(f));
      }
    }
  }

  /**
   * Reads a watch until {@code max} events (bookmarks left out) or its end, as {@code "TYPE name
   * k=v,k=v"} (annotations sorted).
   */
  List<String> events(okhttp3.Call call, int max) throws IOException, ApiException {
    List<String> out = new java.util.ArrayList<>();
    java.lang.reflect.Type t =
        new com.google.gson.reflect.TypeToken<
            io.kubernetes.client.util.Watch.Response<com.google.gson.JsonObject>>() {}.getType();
    try (io.kubernetes.client.util.Watch<com.google.gson.JsonObject> w =
        io.kubernetes.client.util.Watch.createWatch(k.watchApiClient(), call, t)) {
      for (io.kubernetes.client.util.Watch.Response<com.google.gson.JsonObject> ev : w) {
        if (ev.type.equals("BOOKMARK")) {
          continue;
        }
        if (ev.object == null) {
          out.add(
              ev.type
                  + " "
                  + (ev.status == null ? "" : ev.status.getCode() + " " + ev.status.getReason()));
        } else {
          JsonNode o = MAPPER.readTree(ev.object.toString());
          Map<String, String> ann = new TreeMap<>();
          o.path("metadata")
              .path("annotations")
              .properties()
              .forEach(e -> ann.put(e.getKey(), e.getValue().asText()));
          StringBuilder b =
              new StringBuilder(ev.type)
                  .append(' ')
                  .append(o.path("metadata").path("name").asText())
                  .append(' ');
          b.append(
              String.join(
                  ",", ann.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList()));
          out.add(b.toString().trim());
        }
        if (out.size() >= max) {
          break;
        }
      }
    }
    return out;
  }

  /**
   * On the real server, installs the scheduler-plugins PodGroup CustomResourceDefinition
   * (scheduling.x-k8s.io/v1alpha1, namespaced, status subresource, fields preserved) once and waits
   * until it is served; the emulator serves PodGroups built in.
   */
  void ensurePodGroupCrd() throws IOException, InterruptedException {
    if (!real()) {
      return;
    }
    String path = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups";
    if (raw("GET", path, null, null).code() == 200) {
      return;
    }
    String preserve = "{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}";
    String crd =
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
            + "\"metadata\":{\"name\":\"podgroups.scheduling.x-k8s.io\"},\"spec\":{\"group\":\"scheduling.x-k8s.io\","
            + "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"podgroups\",\"singular\":\"podgroup\",\"kind\":\"PodGroup\","
            + "\"listKind\":\"PodGroupList\",\"shortNames\":[\"pg\",\"pgs\"]},\"versions\":[{\"name\":\"v1alpha1\","
            + "\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}},\"schema\":{\"openAPIV3Schema\":"
            + "{\"type\":\"object\",\"properties\":{\"spec\":"
            + preserve
            + ",\"status\":"
            + preserve
            + "}}}}]}}";
    Outcome o =
        raw(
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "application/json",
            crd);
    if (o.code() != 201 && o.code() != 409) {
      throw new IllegalStateException(
          "cannot create the PodGroup CRD: " + o.code() + " " + o.body());
    }
    for (int i = 0; i < 300; i++) {
      if (raw("GET", path, null, null).code() == 200) {
        return;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("the PodGroup CRD was not served within 30 s");
  }

  /**
   * Prepares a conformance row. On a (fresh) emulator: creates namespace {@value #TEAM}. On the
   * real server (shared by every row): removes what earlier rows left (every node, every pod with
   * grace period 0 as no kubelet confirms deletions there, configmaps in default other than kube-*,
   * podgroups, ResourceSlices, DeviceClasses, ResourceClaims) and makes sure namespace {@value
   * #TEAM} and its default ServiceAccount exist (the ServiceAccount admission plugin refuses pods
   * before that).
   */
  Fx prepare() throws IOException, InterruptedException {
    if (!real()) {
      k.createNamespace(TEAM);
      return this;
    }
    for (JsonNode n : k.list("nodes", null)) {
      k.delete("nodes", null, n.path("metadata").path("name").asText());
    }
    for (JsonNode p : k.list("pods", null)) {
      raw(
          "DELETE",
          "/api/v1/namespaces/"
              + p.path("metadata").path("namespace").asText()
              + "/pods/"
              + p.path("metadata").path("name").asText()
              + "?gracePeriodSeconds=0",
          null,
          null);
    }
    for (JsonNode c : k.list("configmaps", "default")) {
      String name = c.path("metadata").path("name").asText();
      if (!name.startsWith("kube-")) {
        raw(
            "PATCH",
            "/api/v1/namespaces/default/configmaps/" + name,
            "application/merge-patch+json",
            "{\"metadata\":{\"finalizers\":null}}");
        k.delete("configmaps", "default", name);
      }
    }
    String pg = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups";
    if (raw("GET", pg, null, null).code() == 200) {
      raw("DELETE", pg, null, null);
    }
    String dra = "/apis/resource.k8s.io/v1/";
    for (String c :
        List.of(
            "resourceslices",
            "deviceclasses",
            "namespaces/default/resourceclaims",
            "namespaces/" + TEAM + "/resourceclaims")) {
      raw("DELETE", dra + c, null, null);
    }
    if (k.get("namespaces", null, TEAM).isEmpty()) {
      k.createNamespace(TEAM);
    }
    for (int i = 0; i < 300; i++) {
      if (raw("GET", "/api/v1/namespaces/" + TEAM + "/serviceaccounts/default", null, null).code()
          == 200) {
        return this;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "namespace " + TEAM + " got no default ServiceAccount within 30 s");
  }

  @Override
  public void close() {
    if (owned) {
      k.close();
    }
  }
}
