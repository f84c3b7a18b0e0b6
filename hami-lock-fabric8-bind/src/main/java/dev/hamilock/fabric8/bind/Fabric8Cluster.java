package dev.hamilock.fabric8.bind;

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
import dev.hamilock.core.BackendFailure;
import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.fabric8.internal.Fabric8Http;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.function.UnaryOperator;

/**
 * The bind flow's cluster ports ({@link ClusterReader}, {@link ClusterWriter}) on fabric8's {@code
 * KubernetesClient}, for {@code PodBinder}, {@code ExtenderFilter} and {@code DevicePluginHandoff}:
 * the requests of hami-lock-k8s-bind's {@code KubernetesCluster} (paths, queries and bodies from
 * {@link KubernetesWire}, so the same bytes on the wire; answers read as plain JSON through {@link
 * JsonViews}, not as fabric8's models) sent through fabric8's own HTTP client, one raw request each
 * (fabric8's resource DSL would GET before every patch, and its {@code Binding} create would throw
 * on the {@code v1.Status} answer although the pod was bound, kubernetes#140490).
 *
 * <p><b>Requests:</b> {@code GET /api/v1/nodes/{node}}, {@code GET
 * /api/v1/namespaces/{ns}/pods/{name}} (404 ⇒ empty); {@link #listPodsAssignedTo}: the lists of
 * {@link KubernetesWire#assignedToQueries}; {@link #listPodsOnNode}: {@code GET
 * /api/v1/pods?fieldSelector=spec.nodeName%3D{node}}; {@code PATCH} of the pod as {@code
 * application/merge-patch+json}; {@code POST .../pods/{name}/binding}; {@code POST
 * /api/v1/namespaces/{ns}/events}. Reads send no {@code resourceVersion} (consistent reads, the
 * {@link ClusterReader} freshness contract).
 *
 * <p><b>Failures.</b> The fabric8 client's {@code requestTimeout} (default 10 s) is each request's
 * whole-call timeout. A read answered 5xx or 429 or without answer is repeated at most 4 times
 * (after its {@code Retry-After} capped at 5 s, else 20 ms to 1 s of back-off, as on client-java;
 * fabric8 8.0's own repetitions ignored it), whatever the client's {@code requestRetryBackoffLimit}
 * says; a write is sent once (a write answered 5xx or not at all may have been applied:
 * UNAVAILABLE, as on client-java's {@code KubernetesCluster}, never the 409 CONFLICT of its
 * repetition; an eviction refused 429 by a disruption budget is not repeated; unlike client-java, a
 * pod patch answered 429 is not repeated either). The final failure is a {@link ClusterException}
 * of core's {@link BackendFailure#classify} kind; the Binding's answer is mapped by {@link
 * KubernetesWire#bindingAnswer}; an interruption keeps the thread's interrupt flag set. No
 * unchecked exception escapes for API or data problems. Thread-safe.
 */
public final class Fabric8Cluster extends KubernetesReads implements ClusterWriter {
  private static final String MERGE_PATCH = "application/merge-patch+json";

  private final KubernetesClient client;

  /**
   * Reads: fabric8's repetitions bounded as client-java's {@code KubernetesCluster}: 5 attempts.
   */
  private final Fabric8Http.Requests reads;

  /**
   * Writes: sent once, as client-java's: a write answered 5xx or not at all may have been applied,
   * and repeating a conditional one would turn that into a 409 CONFLICT ("nothing written").
   */
  private final Fabric8Http.Requests writes;

  private Fabric8Cluster(KubernetesClient client) {
    this.client = client;
    this.reads = Fabric8Http.repeating(client, 4);
    this.writes = Fabric8Http.repeating(client, 0);
  }

  /**
   * @param client a fabric8 client (base URL, credentials, timeouts, retries); not closed here
   * @return the ports over it
   * @throws NullPointerException if {@code client} is null
   */
  public static Fabric8Cluster create(KubernetesClient client) {
    return new Fabric8Cluster(Objects.requireNonNull(client, "client"));
  }

  @Override
  public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
      throws ClusterException {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    String body = KubernetesWire.mergePatch(Objects.requireNonNull(patch, "patch"));
    String what = "PATCH pod " + namespace + "/" + name;
    JsonNode answer =
        read(
                what,
                writes,
                podPath(namespace, name),
                false,
                b -> b.method("PATCH", MERGE_PATCH, body))
            .orElseThrow();
    return KubernetesWire.pod(what, answer);
  }

  @Override
  public BindingPostResult bind(
      String namespace, String name, String uid, String resourceVersion, String node) {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    requireNonBlank(node, "node");
    String body =
        KubernetesWire.binding(
            namespace,
            name,
            Objects.requireNonNull(uid, "uid"),
            Objects.requireNonNull(resourceVersion, "resourceVersion"),
            node);
    String what = "binding pod " + namespace + "/" + name + " to node " + node;
    try {
      Fabric8Http.send(writes, podPath(namespace, name) + "/binding", post(body));
      return BindingPostResult.bound();
    } catch (Failure f) {
      if (f.isInterruption()) {
        return BindingPostResult.ambiguous(what + " was interrupted: " + f.getMessage())
            .withAnswer(f.httpStatus(), f.getCause());
      }
      return KubernetesWire.bindingAnswer(
          f.status(),
          f.getMessage(),
          what,
          f.getMessage(),
          f.getCause(),
          () -> readPod(namespace, name).flatMap(ClusterPod::nodeName));
    }
  }

  @Override
  public void evictPod(String namespace, String name, String uid) throws ClusterException {
    String body = KubernetesWire.eviction(namespace, name, uid);
    try {
      Fabric8Http.send(writes, podPath(namespace, name) + "/eviction", post(body));
    } catch (Failure f) {
      throw failure("evicting pod " + namespace + "/" + name, f);
    }
  }

  @Override
  public void recordPodEvent(
      String namespace, String name, String uid, String type, String reason, String message)
      throws ClusterException {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    String body =
        KubernetesWire.podEvent(namespace, name, uid, type, reason, message, Instant.now());
    String what = "recording event " + reason + " on pod " + namespace + "/" + name;
    try {
      Fabric8Http.send(writes, "api/v1/namespaces/" + escape(namespace) + "/events", post(body));
    } catch (Failure f) {
      throw failure(what, f);
    }
  }

  private static UnaryOperator<HttpRequest.Builder> post(String body) {
    return b -> b.method("POST", "application/json", body);
  }

  @Override
  protected Optional<JsonNode> get(
      String what, String path, Map<String, String> query, boolean notFoundIsEmpty)
      throws ClusterException {
    StringJoiner q = new StringJoiner("&", "?", "").setEmptyValue("");
    query.forEach((k, v) -> q.add(k + "=" + escape(v)));
    return read(what, reads, path + q, notFoundIsEmpty, b -> b);
  }

  /** One request; its 2xx answer as a JSON object, a 404 empty if {@code notFoundIsEmpty}. */
  private Optional<JsonNode> read(
      String what,
      Fabric8Http.Requests http,
      String path,
      boolean notFoundIsEmpty,
      UnaryOperator<HttpRequest.Builder> request)
      throws ClusterException {
    String answer;
    try {
      answer = Fabric8Http.send(http, path, request);
    } catch (Failure f) {
      if (notFoundIsEmpty && f.status() == 404) {
        return Optional.empty();
      }
      throw failure(what, f);
    }
    try {
      return Optional.of(JsonViews.readObject(answer.getBytes(StandardCharsets.UTF_8)));
    } catch (MalformedObjectException e) {
      throw new ClusterException(
          ClusterException.Kind.UNAVAILABLE, what + ": unreadable answer: " + e.getMessage(), e);
    }
  }

  /** A final failure, classified as the lock's store classifies it. */
  private static ClusterException failure(String what, Failure f) {
    return new ClusterException(
        BackendFailure.classify(f.status(), f.getMessage(), f.isInterruption()),
        what + " failed: " + f.getMessage(),
        f.getCause(),
        f.httpStatus());
  }

  @Override
  protected String escape(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  @Override
  public String toString() {
    return "Fabric8Cluster[" + client.getMasterUrl() + "]";
  }
}
