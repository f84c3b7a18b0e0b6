package dev.hamilock.doctor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import okhttp3.Call;
import okhttp3.Response;

/**
 * The doctor's reads, as raw JSON (so objects newer than client-java's models are read whole): one
 * GET per list, a POST for SubjectAccessReviews. Every failure becomes a {@link
 * ClusterReadException} naming what was read and, for a 403, the missing permission; a 404 on a
 * list means "this API server does not serve that resource" and is returned as empty.
 */
final class Cluster {

  private static final String[] AUTH = {"BearerToken"};

  private final ApiClient client;
  private final InstantSource local;

  /** The API server's clock minus {@link #local}, from the last answer's {@code Date} header. */
  private volatile Duration serverOffset = Duration.ZERO;

  Cluster(ApiClient client, InstantSource local) {
    this.client = client;
    this.local = local;
  }

  /**
   * The API server's clock as this process can know it: {@code local} shifted by the offset of the
   * last answer's {@code Date} header (RFC 9110 §6.6.1, whole seconds, so the middle of its second
   * is taken: off by at most half a second plus one round trip). Lock stamps are judged against it,
   * so a doctor on a machine whose clock runs minutes ahead does not call a live lock expired (and
   * {@code unlock} it without {@code --force}). Before the first answer, or without the header, it
   * is {@code local}.
   */
  InstantSource serverClock() {
    return () -> local.instant().plus(serverOffset);
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

    /**
     * @return "list R in namespace NS", "list R in all namespaces", or "list R" for the
     *     cluster-scoped nodes
     */
    String listing(Optional<String> namespace) {
      return "list "
          + qualified()
          + namespace
              .map(ns -> " in namespace " + ns)
              .orElse(plural.equals("nodes") ? "" : " in all namespaces");
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
  Optional<List<JsonNode>> list(Resource r, Optional<String> namespace)
      throws ClusterReadException {
    String what = r.listing(namespace);
    JsonNode answer;
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
    List<JsonNode> items = Json.objects(answer, "items");
    for (JsonNode item : items) {
      // list items carry no kind/apiVersion; preflight's model needs them
      ((ObjectNode) item)
          .put("apiVersion", r.group().isEmpty() ? r.version() : r.group() + "/" + r.version())
          .put("kind", r.kind());
    }
    return Optional.of(items);
  }

  /**
   * @return the object, or empty when it does not exist
   */
  Optional<JsonNode> get(Resource r, Optional<String> namespace, String name)
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
  Optional<JsonNode> accessReview(String user, String verb, String group, String resource)
      throws ClusterReadException {
    ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.put("apiVersion", "authorization.k8s.io/v1").put("kind", "SubjectAccessReview");
    ObjectNode spec = body.putObject("spec").put("user", user);
    if (user.startsWith("system:serviceaccount:")) {
      spec.putArray("groups")
          .add("system:serviceaccounts")
          .add("system:serviceaccounts:" + user.split(":")[2])
          .add("system:authenticated");
    }
    spec.putObject("resourceAttributes")
        .put("verb", verb)
        .put("group", group)
        .put("resource", resource);
    try {
      return Optional.of(
          Json.object(
              call(
                  "POST",
                  "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                  body.toString().getBytes(StandardCharsets.UTF_8)),
              "status"));
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

  private JsonNode call(String method, String path, byte[] body) throws ApiException {
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
    // the answer as bytes for JsonViews: client-java's execute would parse it with Gson; the
    // failures are mapped as its handleResponse maps them (non-2xx: message, code, headers, body)
    byte[] answer;
    int status;
    try (Response r = c.execute()) {
      Instant received = local.instant();
      Date date = r.headers().getDate("Date");
      if (date != null) {
        serverOffset = Duration.between(received, date.toInstant().plusMillis(500));
      }
      status = r.code();
      answer = r.body() == null ? new byte[0] : r.body().bytes();
      if (!r.isSuccessful()) {
        throw new ApiException(
            r.message(),
            r.code(),
            r.headers().toMultimap(),
            new String(answer, StandardCharsets.UTF_8));
      }
    } catch (ApiException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new ApiException(e);
    }
    try {
      return JsonViews.readObject(answer);
    } catch (MalformedObjectException e) {
      throw new ApiException(status, "response body is not a JSON object");
    }
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
      JsonNode status = JsonViews.readObject(body.getBytes(StandardCharsets.UTF_8));
      String reason = Json.text(status, "reason");
      String message = Json.text(status, "message");
      if (!message.isEmpty()) {
        return Optional.of((reason.isEmpty() ? "" : reason + ": ") + message);
      }
    } catch (MalformedObjectException ignored) {
      // not a Status object: use the raw text
    }
    return Optional.of(body.length() > 300 ? body.substring(0, 300) + "…" : body);
  }
}
