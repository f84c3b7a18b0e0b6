package dev.hamilock.doctor;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.ApiResponse;
import io.kubernetes.client.openapi.Pair;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okhttp3.Call;

/**
 * The doctor's reads, as raw JSON (so objects newer than client-java's models are read whole): one
 * GET per list, a POST for SubjectAccessReviews. Every failure becomes a {@link
 * ClusterReadException} naming what was read and, for a 403, the missing permission; a 404 on a
 * list means "this API server does not serve that resource" and is returned as empty.
 */
final class Cluster {

  private static final String[] AUTH = {"BearerToken"};

  private final ApiClient client;

  Cluster(ApiClient client) {
    this.client = client;
  }

  ApiClient client() {
    return client;
  }

  /** A resource collection: its path prefix and the words used in messages. */
  record Resource(String group, String version, String plural, String kind) {
    String apiPath(Optional<String> namespace) {
      String base = group.isEmpty() ? "/api/" + version : "/apis/" + group + "/" + version;
      return base + namespace.map(ns -> "/namespaces/" + ns).orElse("") + "/" + plural;
    }

    String qualified() {
      return group.isEmpty() ? plural : plural + "." + group;
    }
  }

  static final Resource NODES = new Resource("", "v1", "nodes", "Node");
  static final Resource PODS = new Resource("", "v1", "pods", "Pod");
  static final Resource EVENTS = new Resource("", "v1", "events", "Event");
  static final Resource CONFIGMAPS = new Resource("", "v1", "configmaps", "ConfigMap");
  static final Resource DEPLOYMENTS = new Resource("apps", "v1", "deployments", "Deployment");
  static final Resource PODGROUPS =
      new Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup");

  /**
   * @return the items, or empty when the server does not serve the resource (404)
   */
  Optional<List<JsonObject>> list(Resource r, Optional<String> namespace)
      throws ClusterReadException {
    String what =
        "list "
            + r.qualified()
            + namespace.map(ns -> " in namespace " + ns).orElse(" in all namespaces");
    JsonObject answer;
    try {
      answer = call("GET", r.apiPath(namespace), null);
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return Optional.empty();
      }
      throw failure(
          what,
          e,
          "get/list on "
              + r.qualified()
              + namespace.map(ns -> " in " + ns).orElse(" cluster-wide"));
    }
    List<JsonObject> items = Json.objects(answer, "items");
    for (JsonObject item : items) {
      // list items carry no kind/apiVersion; preflight's model needs them
      item.addProperty(
          "apiVersion", r.group().isEmpty() ? r.version() : r.group() + "/" + r.version());
      item.addProperty("kind", r.kind());
    }
    return Optional.of(items);
  }

  /**
   * @return the object, or empty when it does not exist
   */
  Optional<JsonObject> get(Resource r, Optional<String> namespace, String name)
      throws ClusterReadException {
    String what = "get " + r.qualified() + " " + namespace.map(ns -> ns + "/").orElse("") + name;
    try {
      return Optional.of(call("GET", r.apiPath(namespace) + "/" + client.escapeString(name), null));
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return Optional.empty();
      }
      throw failure(what, e, "get on " + r.qualified());
    }
  }

  /**
   * Asks whether a user may do something (a SubjectAccessReview).
   *
   * @return the review's status, or empty when the server does not serve SubjectAccessReviews
   */
  Optional<JsonObject> accessReview(String user, String verb, String group, String resource)
      throws ClusterReadException {
    JsonObject attrs = new JsonObject();
    attrs.addProperty("verb", verb);
    attrs.addProperty("group", group);
    attrs.addProperty("resource", resource);
    JsonObject spec = new JsonObject();
    spec.addProperty("user", user);
    if (user.startsWith("system:serviceaccount:")) {
      com.google.gson.JsonArray groups = new com.google.gson.JsonArray();
      groups.add("system:serviceaccounts");
      groups.add("system:serviceaccounts:" + user.split(":")[2]);
      groups.add("system:authenticated");
      spec.add("groups", groups);
    }
    spec.add("resourceAttributes", attrs);
    JsonObject body = new JsonObject();
    body.addProperty("apiVersion", "authorization.k8s.io/v1");
    body.addProperty("kind", "SubjectAccessReview");
    body.add("spec", spec);
    try {
      return Optional.of(
          Json.object(
              call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body), "status"));
    } catch (ApiException e) {
      if (e.getCode() == 404) {
        return Optional.empty();
      }
      throw failure(
          "create a SubjectAccessReview (may "
              + user
              + " "
              + verb
              + " "
              + resource
              + "."
              + group
              + "?)",
          e,
          "create on subjectaccessreviews.authorization.k8s.io");
    }
  }

  private JsonObject call(String method, String path, Object body) throws ApiException {
    Map<String, String> headers = new HashMap<>();
    headers.put("Accept", "application/json");
    if (body != null) {
      headers.put("Content-Type", "application/json");
    }
    Call c =
        client.buildCall(
            null,
            path,
            method,
            new ArrayList<Pair>(),
            new ArrayList<Pair>(),
            body,
            headers,
            new HashMap<>(),
            new HashMap<>(),
            AUTH,
            null);
    ApiResponse<JsonElement> r;
    try {
      r = client.execute(c, JsonElement.class);
    } catch (ApiException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new ApiException(e);
    }
    JsonElement data = r.getData();
    if (data == null || !data.isJsonObject()) {
      throw new ApiException(r.getStatusCode(), "response body is not a JSON object");
    }
    return data.getAsJsonObject();
  }

  static ClusterReadException failure(String what, ApiException e, String permission) {
    int code = e.getCode();
    String why;
    if (code == 0) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      why =
          "no answer from the API server: "
              + c.getClass().getSimpleName()
              + (c.getMessage() == null ? "" : " " + c.getMessage());
    } else {
      why =
          statusMessage(e.getResponseBody())
              .orElse(e.getMessage() == null ? "(no message)" : e.getMessage());
    }
    return new ClusterReadException(
        what, code, why, code == 403 ? Optional.of(permission) : Optional.empty(), e);
  }

  private static Optional<String> statusMessage(String body) {
    if (body == null || body.isBlank()) {
      return Optional.empty();
    }
    try {
      JsonElement e = JsonParser.parseString(body);
      if (e.isJsonObject()) {
        String reason = Json.text(e.getAsJsonObject(), "reason");
        String message = Json.text(e.getAsJsonObject(), "message");
        if (!message.isEmpty()) {
          return Optional.of((reason.isEmpty() ? "" : reason + ": ") + message);
        }
      }
    } catch (RuntimeException ignored) {
      // not a Status object: use the raw text
    }
    return Optional.of(body.length() > 300 ? body.substring(0, 300) + "…" : body);
  }
}
