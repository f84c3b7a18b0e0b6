package dev.hamilock.k8s.bind;

import static dev.hamilock.core.internal.Checks.requireNonBlank;

import com.fasterxml.jackson.databind.JsonNode;
import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeException;
import dev.failsafe.RetryPolicy;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.KubernetesWire;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.k8s.internal.ApiFailures;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.Pair;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bind flow's cluster ports ({@link ClusterReader}, {@link ClusterWriter}) over client-java,
 * for {@code dev.hamilock.bind.PodBinder}, {@code ExtenderFilter} and {@code DevicePluginHandoff}.
 *
 * <p><b>Raw, schema-free calls.</b> Every request is built by the {@link ApiClient} ({@code
 * buildCall}: base path, credentials, TLS) and its answer parsed as plain JSON, so
 *
 * <ul>
 *   <li>fields the generated models do not know (a newer API server) never fail a call
 *       (client-java's models throw {@code IllegalArgumentException} on them, kube-api-notes §4.2);
 *   <li>the Binding's {@code v1.Status} answer is read as what it is, where the typed {@code
 *       createNamespacedPodBinding} throws although the pod was bound (§2, kubernetes#140490);
 *   <li>patches carry {@code Content-Type: application/merge-patch+json} (the typed {@code
 *       patchNamespacedPod(...).execute()} sends {@code application/json} and gets 415, §4.1);
 *   <li>every request has a finite whole-call timeout (client-java's default read timeout is
 *       infinite, §4.8), and OkHttp never silently re-sends a request whose answer was lost.
 * </ul>
 *
 * <p><b>Freshness.</b> Reads send no {@code resourceVersion} parameter, so the API server answers
 * with a consistent read: state at least as new as every write completed before the call, as the
 * {@link ClusterReader} contract requires — from etcd (quorum read), or, for lists on a
 * kube-apiserver with {@code ConsistentListFromCache} (on by default since 1.31; seen on v1.37.2 in
 * {@code apiserver_watch_cache_consistent_read_total}), from its watch cache once that has caught
 * up with etcd's current revision. No informer cache is used on this side.
 *
 * <p><b>Requests</b> (paths under the client's base path):
 *
 * <ul>
 *   <li>{@link #readNode}: {@code GET /api/v1/nodes/{node}}; {@link #readPod}: {@code GET
 *       /api/v1/namespaces/{ns}/pods/{name}} — 404 ⇒ empty;
 *   <li>{@link #listPodsAssignedTo}: two lists, first {@code GET
 *       /api/v1/pods?labelSelector=hami.io/vgpu-node%3D{node}&fieldSelector=spec.nodeName%3D} (the
 *       node's pods not bound yet), then {@code GET
 *       /api/v1/pods?fieldSelector=spec.nodeName%3D{node}} (every pod bound to it, labelled or not:
 *       a pod allocated by a HAMi that does not write the label, such as v2.3, or whose label was
 *       removed by hand, still holds its devices; issue 23); a pod in both (bound between the two
 *       reads: {@code spec.nodeName} never changes once set, so none is missed) counts once, as its
 *       later version; then only pods whose <em>annotation</em> {@code hami.io/vgpu-node} equals
 *       the node are kept. kube-apiserver serves both from its watch cache through its {@code
 *       spec.nodeName} index (consistent reads, {@code ConsistentListFromCache}), so their cost
 *       grows with the node's pods and the cluster's unbound pods, not with all pods. The single
 *       list by the label alone that this replaced can only be answered by filtering every pod: at
 *       20,000 pods (500 nodes × 40) kube-apiserver v1.37.2 fetched 20,005 pods from its watch
 *       cache per read, 39.5 ms of server time (9.5 ms at 200 pods); the two indexed lists fetch
 *       the node's 45, 2 × 2.4 ms (RealScaleTest in this module, loaded 2-core machine). A pod
 *       labelled for the node but bound to another is not counted (its devices are on the node it
 *       runs on). Cost: a bind's happy path sends 7 requests (GET pod, GET node, PATCH node lock, 2
 *       LIST pods, PATCH pod, POST binding), one more than before. The label is HAMi's index (its
 *       Filter's patch helper, {@code pkg/util/util.go} PatchPodAnnotations, and this library write
 *       it next to the annotation, spec §2.2 step 6) and lets the API server select a node's pods;
 *       the annotation is the truth HAMi accounts by ({@code pkg/scheduler/scheduler.go}, spec
 *       §2.4), so a stale or hand-edited label never adds usage, and a missing label on a bound pod
 *       removes none. A node name that is not a valid label value (longer than 63 characters)
 *       cannot be in a label, so for it all pods are listed and filtered by the annotation alone;
 *   <li>{@link #listPodsOnNode}: {@code GET /api/v1/pods?fieldSelector=spec.nodeName%3D{node}},
 *       list order kept (HAMi {@code GetPendingPod}, spec §3.1 step 2);
 *   <li>{@link #readDra}: one {@code GET /apis/resource.k8s.io/v1} per instance, then (only where
 *       it is served) a LIST of ResourceSlices and one of ResourceClaims per call (issue 28);
 *   <li>{@link #patchPodMetadata}: {@code PATCH /api/v1/namespaces/{ns}/pods/{name}} as JSON merge
 *       patch, keys sorted as Go's encoder sorts them, e.g. {@code
 *       {"metadata":{"annotations":{"hami.io/bind-phase":"allocating"},"labels":{…},"uid":"…"}}};
 *   <li>{@link #bind}: {@code POST /api/v1/namespaces/{ns}/pods/{name}/binding} with {@code
 *       {"apiVersion":"v1","kind":"Binding","metadata":{"name","namespace","uid"},"target":{"apiVersion":"v1","kind":"Node","name"}}}.
 * </ul>
 *
 * <p><b>Failures.</b> Reads retry timeouts, connection failures, 429 (honouring {@code
 * Retry-After}, capped at 5 s) and 5xx with jittered back-off up to {@link Builder#maxAttempts};
 * then {@link ClusterException.Kind#UNAVAILABLE}. Writes retry only 429 (certainly not applied); a
 * timeout or 5xx on a write is {@link ClusterException.Kind#UNAVAILABLE} at once (it may have been
 * applied; the bind flow re-reads). The final failure is classified as the lock's store classifies
 * it ({@link ApiFailures#kind}, the mapping of {@link dev.hamilock.core.BackendFailure}); an
 * interruption keeps the thread's interrupt flag set. The Binding's mapping is described at {@link
 * #bind}. No unchecked exception escapes for API or data problems.
 *
 * <p>Thread-safe; one instance per {@code ApiClient} serves any number of threads.
 */
public final class KubernetesCluster implements ClusterReader, ClusterWriter {
  private static final Logger LOG = LoggerFactory.getLogger(KubernetesCluster.class);

  /** Default whole-call timeout of one request: 10 s (below the extender's 30 s HTTP timeout). */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

  /** Default attempts of a read (and of a write answered 429): 5. */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;

  private final KubeHttp http;

  private final KubernetesWire.DraReads dra = new KubernetesWire.DraReads();

  private final ApiFailures failures;
  private final RetryPolicy<Object> throttledWrites;

  private KubernetesCluster(Builder b) {
    this.http = new KubeHttp(b.apiClient, null, b.requestTimeout);
    this.failures =
        new ApiFailures(
            b.maxAttempts, Duration.ofMillis(20), Duration.ofSeconds(1), Duration.ofSeconds(5));
    this.throttledWrites =
        RetryPolicy.builder()
            .handleIf(
                e ->
                    e instanceof ApiException a
                        && a.getCode() == 429
                        && !Thread.currentThread().isInterrupted())
            .withMaxAttempts(b.maxAttempts)
            .withBackoff(Duration.ofMillis(20), Duration.ofSeconds(1))
            .withJitter(0.25)
            .withDelayFn(
                ctx ->
                    ctx.getLastException() instanceof ApiException a
                        ? failures.retryAfter(a).orElse(Duration.ofMillis(-1))
                        : Duration.ofMillis(-1))
            .build();
  }

  /**
   * @param apiClient the configured client (base path, credentials); its own read timeout is
   *     replaced by the request timeout for this cluster's calls
   * @return a builder with a 10 s request timeout and 5 read attempts
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  /**
   * @param apiClient the configured client
   * @return a cluster with the defaults of {@link #builder(ApiClient)}
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static KubernetesCluster create(ApiClient apiClient) {
    return builder(apiClient).build();
  }

  /**
   * @return the whole-call timeout of every request
   */
  public Duration requestTimeout() {
    return http.requestTimeout();
  }

  // ------------------------------------------------------------------------------ reads

  /**
   * {@inheritDoc}
   *
   * <p>{@code GET /api/v1/nodes/{name}} (quorum read). A node whose {@code status.allocatable}
   * holds a malformed quantity is {@link ClusterException.Kind#REJECTED}.
   */
  @Override
  public Optional<NodeView> readNode(String name) throws ClusterException {
    requireNonBlank(name, "name");
    String what = "GET node " + name;
    Optional<JsonNode> o = readOptional(what, "/api/v1/nodes/" + http.escape(name));
    if (o.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(JsonViews.nodeView(o.get()));
    } catch (MalformedObjectException e) {
      throw new ClusterException(ClusterException.Kind.REJECTED, what + ": " + e.getMessage(), e);
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>{@code GET /api/v1/namespaces/{namespace}/pods/{name}} (quorum read).
   */
  @Override
  public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    String what = "GET pod " + namespace + "/" + name;
    Optional<JsonNode> o = readOptional(what, podPath(namespace, name));
    if (o.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(KubernetesWire.pod(what, o.get()));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Two consistent lists by the label {@code hami.io/vgpu-node=<node>}, the unbound pods ({@code
   * spec.nodeName=}) and then the node's ({@code spec.nodeName=<node>}), each served by the API
   * server's {@code spec.nodeName} index; filtered by the annotation (see the class comment for
   * why). For a node name that cannot be a label value: one list of all pods.
   */
  @Override
  public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
    requireNonBlank(node, "node");
    String what = "LIST pods assigned to node " + node;
    List<JsonNode> lists = new ArrayList<>();
    for (Map<String, String> query : KubernetesWire.assignedToQueries(node)) {
      List<Pair> pairs = new ArrayList<>();
      query.forEach((k, v) -> pairs.add(new Pair(k, v)));
      lists.add(list(what, pairs));
    }
    return KubernetesWire.assignedTo(what, node, lists);
  }

  /**
   * {@inheritDoc}
   *
   * <p>One quorum list with {@code fieldSelector=spec.nodeName=<node>} over all namespaces.
   */
  @Override
  public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
    requireNonBlank(node, "node");
    String what = "LIST pods on node " + node;
    return KubernetesWire.pods(
        what, list(what, List.of(new Pair("fieldSelector", "spec.nodeName=" + node))));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Whether the API server serves {@code resource.k8s.io/v1} is asked once, by the first call
   * with nodes: {@code GET /apis/resource.k8s.io/v1}; a 404 (group or version not served, e.g.
   * before Kubernetes 1.34 or with the API disabled) is remembered for this instance's life, so on
   * such a cluster every later call answers {@link DraObjects#NONE} without a request and without a
   * log line above DEBUG (enabling the API later needs a new instance). Where it is served, each
   * call sends two consistent lists (quorum, as the class comment describes): {@code GET
   * /apis/resource.k8s.io/v1/resourceslices} (with {@code fieldSelector=spec.nodeName=<node>} for
   * one node) and {@code GET /apis/resource.k8s.io/v1/resourceclaims} (all namespaces; the API has
   * no selector by allocated node). A 404 on them later means the API went away: {@link
   * DraObjects#NONE}, remembered. Needs RBAC {@code list} on both resources; a 403 is FORBIDDEN
   * like any failed read (fail closed: the usage would be under-counted). A malformed object is
   * {@link ClusterException.Kind#REJECTED} naming its field.
   */
  @Override
  public DraObjects readDra(Collection<String> nodes) throws ClusterException {
    Objects.requireNonNull(nodes, "nodes");
    return dra.read(
        nodes,
        (what, path, query) -> {
          List<Pair> pairs = new ArrayList<>();
          query.forEach((k, v) -> pairs.add(new Pair(k, v)));
          return fetch(what, () -> http.getBody("/" + path, pairs), true);
        });
  }

  // ------------------------------------------------------------------------------ writes

  /**
   * {@inheritDoc}
   *
   * <p>One {@code PATCH} with content type {@code application/merge-patch+json} and the body of
   * {@link KubernetesWire#mergePatch(MetadataPatch)}; retried only on 429.
   */
  @Override
  public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch)
      throws ClusterException {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    Objects.requireNonNull(patch, "patch");
    String what = "PATCH pod " + namespace + "/" + name;
    String body = KubernetesWire.mergePatch(patch);
    JsonNode answer;
    try {
      answer =
          JsonViews.readObject(
              Failsafe.with(throttledWrites)
                  .get(() -> http.patchBody(podPath(namespace, name), KubeHttp.MERGE_PATCH, body)));
    } catch (MalformedObjectException e) {
      throw new ClusterException(
          ClusterException.Kind.UNAVAILABLE, what + ": unreadable answer: " + e.getMessage(), e);
    } catch (FailsafeException e) {
      throw failsafeFailure(what, e);
    } catch (RuntimeException e) {
      throw new ClusterException(
          ClusterException.Kind.UNAVAILABLE, what + ": unreadable answer: " + e, e);
    }
    return KubernetesWire.pod(what, answer);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Mapping of the answer (kube-apiserver {@code pkg/registry/core/pod/storage/storage.go}
   * BindingREST): 2xx ⇒ {@link BindingPostResult.Kind#BOUND}; 409 {@code already assigned to node
   * "X"} ⇒ {@link BindingPostResult.Kind#ALREADY_BOUND} with X (the pod is read if the message does
   * not name it); 404 and 409 {@code Precondition failed: UID in precondition} ⇒ {@link
   * BindingPostResult.Kind#NOT_FOUND}; no answer (timeout, connection reset), 429 and 5xx ⇒ {@link
   * BindingPostResult.Kind#AMBIGUOUS} (the binding may have been applied, HAMi#2645; the POST is
   * never repeated here); every other answer, including 409 {@code is being deleted} ⇒ {@link
   * BindingPostResult.Kind#REJECTED}. Interruption, or an answer the client cannot read ⇒ AMBIGUOUS
   * (with the interrupt flag restored).
   */
  @Override
  public BindingPostResult bind(String namespace, String name, String uid, String node) {
    requireNonBlank(namespace, "namespace");
    requireNonBlank(name, "name");
    requireNonBlank(node, "node");
    Objects.requireNonNull(uid, "uid");
    String what = "binding pod " + namespace + "/" + name + " to node " + node;
    try {
      http.post(
          podPath(namespace, name) + "/binding",
          utf8(KubernetesWire.binding(namespace, name, uid, node)));
      return BindingPostResult.bound();
    } catch (ApiException e) {
      return bindingFailure(namespace, name, what, e);
    } catch (RuntimeException e) {
      // e.g. a 2xx whose body the client could not parse: whether it was applied is for a re-read
      // to tell
      LOG.debug("{}: unexpected client failure: {}", what, e.toString());
      return BindingPostResult.ambiguous(what + ": unexpected client failure: " + e)
          .withAnswer(java.util.OptionalInt.empty(), e);
    }
  }

  /** The Binding's mapping ({@link KubernetesWire#bindingAnswer}) of client-java's failure. */
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

  // ------------------------------------------------------------------------------ helpers

  private static byte[] utf8(String json) {
    return json.getBytes(StandardCharsets.UTF_8);
  }

  private String podPath(String namespace, String name) {
    return "/api/v1/namespaces/" + http.escape(namespace) + "/pods/" + http.escape(name);
  }

  private Optional<JsonNode> readOptional(String what, String path) throws ClusterException {
    return fetch(what, () -> http.getBody(path, List.of()), true);
  }

  private JsonNode list(String what, List<Pair> query) throws ClusterException {
    return fetch(what, () -> http.getBody("/api/v1/pods", query), false).orElseThrow();
  }

  /**
   * An idempotent read with transient retries; 404 ⇒ empty if {@code notFoundIsEmpty}, else a
   * failure.
   */
  private Optional<JsonNode> fetch(
      String what, ApiFailures.ApiCall<byte[]> call, boolean notFoundIsEmpty)
      throws ClusterException {
    try {
      return Optional.of(JsonViews.readObject(failures.read(call)));
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
          podPath(namespace, requireNonBlank(name, "name")) + "/eviction",
          utf8(KubernetesWire.eviction(namespace, name, uid)));
    } catch (ApiException e) {
      throw failure(what, e);
    }
  }

  /**
   * One {@code POST /api/v1/namespaces/{namespace}/events} (core/v1 Event, {@code type: Warning},
   * {@code generateName: <pod>.}, {@code involvedObject} the pod, {@code source.component} {@code
   * hami-lock}, {@code count: 1}, first and last timestamp now). Needs RBAC {@code create} on
   * {@code events} (HAMi's scheduler role has it).
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

  private static ClusterException failsafeFailure(String what, FailsafeException e) {
    Throwable cause = e.getCause();
    if (cause instanceof ApiException a) {
      return failure(what, a);
    }
    if (cause instanceof InterruptedException) {
      Thread.currentThread().interrupt();
      return new ClusterException(
          ClusterException.Kind.INTERRUPTED, what + " was interrupted", cause);
    }
    return new ClusterException(ClusterException.Kind.UNAVAILABLE, what + ": " + e, e);
  }

  /** A final failure, classified as the lock's store classifies it. */
  static ClusterException failure(String what, ApiException e) {
    return new ClusterException(
        ApiFailures.kind(e),
        what + " failed: " + ApiFailures.describe(e),
        e,
        ApiFailures.httpStatus(e));
  }

  @Override
  public String toString() {
    return "KubernetesCluster[requestTimeout=" + http.requestTimeout() + "]";
  }

  /** Validating builder for {@link KubernetesCluster}. Not thread-safe. */
  public static final class Builder {
    private final ApiClient apiClient;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;

    private Builder(ApiClient apiClient) {
      this.apiClient = apiClient;
    }

    /**
     * @param requestTimeout whole-call timeout of each request (default 10 s); positive. A Binding
     *     without answer within it is {@link BindingPostResult.Kind#AMBIGUOUS}.
     * @return this builder
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    /**
     * @param maxAttempts attempts of a read on transient failures and of a write answered 429
     *     (default 5); 1..100
     * @return this builder
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * @return the cluster
     * @throws IllegalArgumentException naming the setting: request timeout null or not positive,
     *     maxAttempts outside 1..100
     */
    public KubernetesCluster build() {
      Validation.positive("requestTimeout", requestTimeout);
      Validation.attempts("maxAttempts", maxAttempts);
      return new KubernetesCluster(this);
    }
  }
}
