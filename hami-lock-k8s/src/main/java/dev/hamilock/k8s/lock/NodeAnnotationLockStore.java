package dev.hamilock.k8s.lock;

import static dev.hamilock.core.internal.Checks.requireNonBlank;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeException;
import dev.failsafe.RetryPolicy;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.k8s.internal.ApiFailures;
import dev.hamilock.k8s.internal.KubeHttp;
import dev.hamilock.k8s.internal.Validation;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link LockStore} on a Kubernetes Node annotation, one request per operation (design decision 2;
 * HAMi's {@code pkg/util/nodelock/nodelock.go} needs three GETs and a merge patch instead):
 *
 * <ul>
 *   <li>{@link #createIfAbsent}: JSON Patch {@code [{"op":"test","path":P,"value":null},
 *       {"op":"add","path":P,"value":V}]} — kube-apiserver's JSON-patch library treats an absent
 *       member as {@code null};
 *   <li>{@link #replaceIfEquals}: {@code [test P old, replace P new]};
 *   <li>{@link #deleteIfEquals}: {@code [test P value, remove P]};
 *   <li>{@link #read}: {@code GET /api/v1/nodes/<node>} without {@code resourceVersion}: "most
 *       recent", a quorum read from etcd, never kube-apiserver's watch cache (Kubernetes API
 *       concepts, "Semantics for get and list"), and never this store's watched view — so {@code
 *       StoreNodeLock.stillHeld} sees every write acknowledged before it.
 * </ul>
 *
 * where {@code P = /metadata/annotations/<key>} with {@code ~} escaped as {@code ~0} and then
 * {@code /} as {@code ~1} ({@code hami.io~1mutex.lock}), sent as {@code
 * application/json-patch+json}. Answers are parsed schema-free, so unknown fields in the Node never
 * break a lock operation.
 *
 * <p><b>Outcomes.</b> 200 ⇒ written ({@link CasResult#written()}; {@code true} for a delete). A 422
 * from a failed {@code test} ⇒ not written, with the witness the caller decides from (no separate
 * read, no state kept between calls):
 *
 * <ul>
 *   <li><em>create</em>: a 422 is ambiguous (a JSON-patch {@code add} under a node without any
 *       annotations map also answers 422). If the watched view ({@link Builder#watchedLockValues},
 *       the node watch while it is connected) shows the node locked by another value, that value is
 *       the witness: a contended attempt costs 1 request. Otherwise the node is read once (2
 *       requests, PATCH and GET): no annotations map ⇒ a merge patch {@code
 *       {"metadata":{"annotations":{K:V},"resourceVersion":RV}}} (409 ⇒ re-read and decide again;
 *       if the node still changed under every attempt, another writer won the race: the create
 *       answers not written with the value read then — contention, never {@code UNAVAILABLE}); our
 *       own value present after an earlier attempt of the same call had an unknown outcome ⇒
 *       written (that attempt was applied late); any other value (or an equal one already present
 *       before this call, or none: removed meanwhile) ⇒ not written with that witness;
 *   <li><em>replace</em>: the node is read once (PATCH and GET) and its value is the witness; never
 *       the watched view, whose value may be the very one that just proved stale;
 *   <li><em>delete</em>: {@code false}, no read (a release that still wants to know reads).
 * </ul>
 *
 * 404 ⇒ {@link LockBackendException.Kind#NODE_NOT_FOUND}; 400/403/415, a 422 that is a validation
 * failure of the patched node rather than a patch that did not apply (its {@code v1.Status} names
 * the object or a field, e.g. {@code metadata.annotations: Too long}; see {@link
 * ApiFailures#isPatchNotApplicable}) and other refusals ⇒ {@link
 * LockBackendException.Kind#REJECTED}.
 *
 * <p><b>Ambiguous outcomes</b> (no answer — timeout, connection reset — or HTTP 5xx; design
 * decision 4): the write may have been applied (HAMi PR #2197's lost-response case). The node is
 * re-read (reads retry transient failures with back-off) and the stored value decides, and is the
 * witness: create — our value ⇒ written, another ⇒ not written with it, none ⇒ not applied; replace
 * — new value ⇒ written, old value ⇒ not applied, another or none ⇒ not written with it; delete —
 * none ⇒ {@code true}, our value ⇒ not applied, another ⇒ {@code false}. "Not applied", 409 and 429
 * (after {@code Retry-After}, capped) repeat the same conditional request, up to {@code
 * maxAttempts}; then {@link LockBackendException.Kind#UNAVAILABLE}. Whether an earlier attempt was
 * ambiguous is state of that one call (the watched view is then not trusted for its witness), never
 * carried to another call or thread. A delete reported as {@code true} after an ambiguous answer
 * means "the value is gone", which is all a release needs.
 *
 * <p>Every request has a finite whole-call timeout (default 10 s). Interruption ⇒ {@link
 * LockBackendException.Kind#INTERRUPTED} with the flag restored. Thread-safe.
 */
public final class NodeAnnotationLockStore implements LockStore {

  private static final Logger LOG = LoggerFactory.getLogger(NodeAnnotationLockStore.class);

  /** Default whole-call timeout of one request: 10 s. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(10);

  /** Default attempts per operation (writes and reads): 5. */
  public static final int DEFAULT_MAX_ATTEMPTS = 5;

  private final KubeHttp http;
  private final ApiFailures failures;
  private final Optional<LockReleaseSignal> signal;
  private final RetryPolicy<Object> writePolicy;

  /** The key the watched view covers, or null for none. */
  private final String watchedKey;

  private final Function<String, Optional<String>> watchedValues;

  private NodeAnnotationLockStore(
      KubeHttp http,
      ApiFailures failures,
      int maxAttempts,
      Optional<LockReleaseSignal> signal,
      String watchedKey,
      Function<String, Optional<String>> watchedValues) {
    this.http = http;
    this.failures = failures;
    this.signal = signal;
    this.watchedKey = watchedKey;
    this.watchedValues = watchedValues;
    this.writePolicy =
        RetryPolicy.builder()
            .handle(NotApplied.class)
            .withMaxAttempts(maxAttempts)
            .withBackoff(Duration.ofMillis(20), Duration.ofSeconds(1))
            .withJitter(0.25)
            .withDelayFn(
                ctx ->
                    ctx.getLastException() instanceof NotApplied n && n.retryAfter != null
                        ? n.retryAfter
                        : Duration.ofMillis(-1))
            .build();
  }

  /**
   * @param apiClient the client (base path, credentials); its own timeouts are replaced by {@link
   *     Builder#requestTimeout(Duration)} for this store's calls
   * @return a builder (request timeout 10 s, 5 attempts, no release signal, no watched view)
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  /**
   * JSON-pointer path of an annotation (RFC 6901: {@code ~} to {@code ~0} first, then {@code /} to
   * {@code ~1}).
   *
   * @param key annotation key, e.g. {@code hami.io/mutex.lock}
   * @return e.g. {@code /metadata/annotations/hami.io~1mutex.lock}
   */
  public static String annotationPointer(String key) {
    Objects.requireNonNull(key, "key");
    return "/metadata/annotations/" + key.replace("~", "~0").replace("/", "~1");
  }

  @Override
  public Optional<LockReleaseSignal> releaseSignal() {
    return signal;
  }

  /** {@inheritDoc} Here: one GET of the node, no {@code resourceVersion} (a quorum read). */
  @Override
  public Optional<String> read(String node, String key) throws LockBackendException {
    return annotation(readNode(node), key);
  }

  /**
   * {@inheritDoc} Here: one JSON Patch; when its {@code test} fails, the witness comes from the
   * watched view if it shows another value, else from one GET (see the class description).
   */
  @Override
  public CasResult createIfAbsent(String node, String key, String value)
      throws LockBackendException {
    return write(new Op(Kind.CREATE, node, key, null, value));
  }

  /** {@inheritDoc} Here: one JSON Patch; when its {@code test} fails, one GET finds the witness. */
  @Override
  public CasResult replaceIfEquals(String node, String key, String expected, String value)
      throws LockBackendException {
    return write(new Op(Kind.REPLACE, node, key, expected, value));
  }

  /** {@inheritDoc} Here: one JSON Patch. */
  @Override
  public boolean deleteIfEquals(String node, String key, String expected)
      throws LockBackendException {
    return write(new Op(Kind.DELETE, node, key, expected, null)).isWritten();
  }

  @Override
  public String toString() {
    return "NodeAnnotationLockStore[requestTimeout=" + http.requestTimeout() + "]";
  }

  // ---------------------------------------------------------------------------------------

  private enum Kind {
    CREATE,
    REPLACE,
    DELETE
  }

  private static final class Op {
    final Kind kind;
    final String node;
    final String key;
    final String expected;
    final String value;

    /** Whether an earlier attempt of this operation had an unknown outcome. */
    boolean ambiguous;

    Op(Kind kind, String node, String key, String expected, String value) {
      this.kind = kind;
      this.node = node;
      this.key = key;
      this.expected = expected;
      this.value = value;
    }

    String describe() {
      return switch (kind) {
        case CREATE -> "create lock " + key + "=\"" + value + "\" on node " + node;
        case REPLACE ->
            "replace lock " + key + "=\"" + expected + "\" by \"" + value + "\" on node " + node;
        case DELETE -> "delete lock " + key + "=\"" + expected + "\" on node " + node;
      };
    }
  }

  /** The write was certainly not applied (or was re-read as not applied): repeat it. */
  private static final class NotApplied extends Exception {
    private static final long serialVersionUID = 1L;
    final transient Duration retryAfter;

    /** Whether another writer changed the node under our conditional merge patch (409). */
    final boolean lostRace;

    NotApplied(String message, Duration retryAfter, Throwable cause) {
      this(message, retryAfter, cause, false);
    }

    NotApplied(String message, Duration retryAfter, Throwable cause, boolean lostRace) {
      super(message, cause, false, false);
      this.retryAfter = retryAfter;
      this.lostRace = lostRace;
    }
  }

  private CasResult write(Op op) throws LockBackendException {
    if (Thread.currentThread().isInterrupted()) {
      throw ApiFailures.interrupted(op.describe());
    }
    try {
      return Failsafe.with(writePolicy).get(() -> attempt(op));
    } catch (FailsafeException e) {
      Throwable cause = e.getCause();
      if (cause instanceof LockBackendException b) {
        throw b;
      }
      if (cause instanceof NotApplied n && n.lostRace) {
        // another writer kept changing the annotation-less node under our merge patch: we
        // lost the race, which is contention (the caller re-reads and waits), not a failure
        LOG.debug("{}: lost the race to another writer: {}", op.describe(), n.getMessage());
        return CasResult.notWritten(annotation(readNode(op.node), op.key));
      }
      if (cause instanceof NotApplied n) {
        // the last answer's HTTP status (e.g. 500) stays on the error (the one error model)
        OptionalInt status =
            n.getCause() instanceof ApiException a
                ? ApiFailures.httpStatus(a)
                : OptionalInt.empty();
        throw new LockBackendException(
            LockBackendException.Kind.UNAVAILABLE,
            n.getMessage() + " (outcome still not applied after retries)",
            n.getCause(),
            status);
      }
      if (cause instanceof InterruptedException) {
        throw ApiFailures.interrupted(op.describe());
      }
      throw new LockBackendException(
          LockBackendException.Kind.UNAVAILABLE, op.describe() + " failed: " + cause, cause);
    }
  }

  /** One request (plus, when needed, the re-read that decides it). */
  private CasResult attempt(Op op) throws LockBackendException, NotApplied {
    String path = nodePath(op.node);
    String pointer = annotationPointer(op.key);
    JsonArray patch = new JsonArray();
    switch (op.kind) {
      case CREATE -> {
        patch.add(operation("test", pointer, JsonNull.INSTANCE));
        patch.add(operation("add", pointer, new JsonPrimitive(op.value)));
      }
      case REPLACE -> {
        patch.add(operation("test", pointer, new JsonPrimitive(op.expected)));
        patch.add(operation("replace", pointer, new JsonPrimitive(op.value)));
      }
      case DELETE -> {
        patch.add(operation("test", pointer, new JsonPrimitive(op.expected)));
        patch.add(operation("remove", pointer, null));
      }
      default -> throw new IllegalStateException(op.kind.name());
    }
    try {
      http.patch(path, KubeHttp.JSON_PATCH, patch.toString());
      return CasResult.written();
    } catch (ApiException e) {
      return afterFailure(op, e);
    }
  }

  private CasResult afterFailure(Op op, ApiException e) throws LockBackendException, NotApplied {
    int code = e.getCode();
    if (ApiFailures.isInterruption(e)) {
      throw ApiFailures.interrupted(op.describe());
    }
    if (code == 422 && ApiFailures.isPatchNotApplicable(e)) {
      if (op.kind == Kind.CREATE) {
        return afterFailedCreate(op);
      }
      if (op.kind == Kind.DELETE) {
        LOG.debug("{}: test failed (422)", op.describe());
        return CasResult.notWritten(Optional.empty()); // a release needs no witness
      }
      // a replace's witness is always read, never taken from the watched view: the expected
      // value may have come from that view, and this refusal shows it may be stale
      Optional<String> current = annotation(readNode(op.node), op.key);
      LOG.debug(
          "{}: test failed (422), value now {}",
          op.describe(),
          current.map(v -> "\"" + v + "\"").orElse("absent"));
      return CasResult.notWritten(current);
    }
    if (code == 404) {
      throw new LockBackendException(
          LockBackendException.Kind.NODE_NOT_FOUND,
          op.describe() + ": node " + op.node + " not found",
          e);
    }
    if (code == 409 || code == 429) {
      Duration retryAfter = failures.retryAfter(e).orElse(null);
      throw new NotApplied(op.describe() + ": " + ApiFailures.describe(e), retryAfter, e);
    }
    if (ApiFailures.isTransient(e)) {
      LOG.debug("{}: ambiguous outcome ({}); re-reading", op.describe(), ApiFailures.describe(e));
      op.ambiguous = true;
      return decideFromStored(op, annotation(readNode(op.node), op.key), e);
    }
    throw ApiFailures.toBackend(e, op.describe(), LockBackendException.Kind.NODE_NOT_FOUND);
  }

  /** Decides an ambiguous write from the value stored now. */
  private CasResult decideFromStored(Op op, Optional<String> current, ApiException cause)
      throws NotApplied {
    switch (op.kind) {
      case CREATE -> {
        if (current.isEmpty()) {
          throw new NotApplied(
              op.describe() + ": not applied (" + ApiFailures.describe(cause) + ")",
              failures.retryAfter(cause).orElse(null),
              cause);
        }
        return current.get().equals(op.value) ? CasResult.written() : CasResult.notWritten(current);
      }
      case REPLACE -> {
        if (current.isPresent() && current.get().equals(op.value)) {
          return CasResult.written();
        }
        if (current.isPresent() && current.get().equals(op.expected)) {
          throw new NotApplied(
              op.describe() + ": not applied (" + ApiFailures.describe(cause) + ")",
              failures.retryAfter(cause).orElse(null),
              cause);
        }
        return CasResult.notWritten(current);
      }
      case DELETE -> {
        if (current.isEmpty()) {
          return CasResult.written(); // "the value is gone", all a release needs
        }
        if (current.get().equals(op.expected)) {
          throw new NotApplied(
              op.describe() + ": not applied (" + ApiFailures.describe(cause) + ")",
              failures.retryAfter(cause).orElse(null),
              cause);
        }
        return CasResult.notWritten(current);
      }
      default -> throw new IllegalStateException(op.kind.name());
    }
  }

  /**
   * A create's {@code test null} or {@code add} failed: find out which, and the witness, from the
   * watched view if it shows another value, else with one GET.
   */
  private CasResult afterFailedCreate(Op op) throws LockBackendException, NotApplied {
    if (!op.ambiguous) {
      Optional<String> seen = watchedValue(op.node, op.key);
      if (seen.isPresent() && !seen.get().equals(op.value)) {
        LOG.debug("{}: test failed (422), watched value \"{}\"", op.describe(), seen.get());
        return CasResult.notWritten(seen);
      }
    }
    JsonObject node = readNode(op.node);
    JsonObject metadata =
        node.has("metadata") && node.get("metadata").isJsonObject()
            ? node.getAsJsonObject("metadata")
            : new JsonObject();
    JsonElement annotations = metadata.get("annotations");
    if (annotations == null || annotations.isJsonNull()) {
      return createWithMergePatch(op, metadata);
    }
    Optional<String> current = annotation(node, op.key);
    if (op.ambiguous && current.isPresent() && current.get().equals(op.value)) {
      LOG.debug("{}: our own value is already stored (an earlier answer was lost)", op.describe());
      return CasResult.written();
    }
    LOG.debug(
        "{}: test failed (422), value now {}",
        op.describe(),
        current.map(v -> "\"" + v + "\"").orElse("absent"));
    return CasResult.notWritten(current);
  }

  /** The node has no annotations map: JSON patch cannot add under it, a merge patch can. */
  private CasResult createWithMergePatch(Op op, JsonObject metadata)
      throws LockBackendException, NotApplied {
    JsonElement rv = metadata.get("resourceVersion");
    if (rv == null || !rv.isJsonPrimitive()) {
      throw new LockBackendException(
          LockBackendException.Kind.REJECTED,
          op.describe()
              + ": node has no metadata.resourceVersion to make the merge patch conditional",
          null);
    }
    JsonObject annotations = new JsonObject();
    annotations.addProperty(op.key, op.value);
    JsonObject meta = new JsonObject();
    meta.add("annotations", annotations);
    meta.addProperty("resourceVersion", rv.getAsString());
    JsonObject body = new JsonObject();
    body.add("metadata", meta);
    LOG.debug(
        "{}: node has no annotations map; merge patch at resourceVersion {}",
        op.describe(),
        rv.getAsString());
    try {
      http.patch(nodePath(op.node), KubeHttp.MERGE_PATCH, body.toString());
      return CasResult.written();
    } catch (ApiException e) {
      if (e.getCode() == 409) {
        throw new NotApplied(
            op.describe() + ": node changed since resourceVersion " + rv.getAsString(),
            null,
            e,
            true);
      }
      if (e.getCode() == 422) {
        throw ApiFailures.toBackend(
            e, op.describe() + " (merge patch)", LockBackendException.Kind.NODE_NOT_FOUND);
      }
      return afterFailure(op, e);
    }
  }

  private Optional<String> watchedValue(String node, String key) {
    if (!key.equals(watchedKey)) {
      return Optional.empty();
    }
    try {
      Optional<String> seen = watchedValues.apply(node);
      return seen == null ? Optional.empty() : seen;
    } catch (RuntimeException e) {
      LOG.debug(
          "watched lock value view failed for node {}: {}; reading the node", node, e.toString());
      return Optional.empty();
    }
  }

  private JsonObject readNode(String node) throws LockBackendException {
    String path = nodePath(node);
    try {
      return failures.read(() -> http.get(path));
    } catch (ApiException e) {
      throw ApiFailures.toBackend(e, "GET node " + node, LockBackendException.Kind.NODE_NOT_FOUND);
    } catch (InterruptedException e) {
      throw ApiFailures.interrupted("GET node " + node);
    }
  }

  private String nodePath(String node) {
    return "/api/v1/nodes/" + http.escape(node);
  }

  private static JsonObject operation(String op, String path, JsonElement value) {
    JsonObject o = new JsonObject();
    o.addProperty("op", op);
    o.addProperty("path", path);
    if (value != null) {
      o.add("value", value);
    }
    return o;
  }

  /**
   * @param object a Kubernetes object as JSON
   * @param key annotation key
   * @return {@code metadata.annotations[key]}, empty if absent or JSON null
   */
  static Optional<String> annotation(JsonObject object, String key) {
    JsonElement meta = object.get("metadata");
    if (meta == null || !meta.isJsonObject()) {
      return Optional.empty();
    }
    JsonElement annotations = meta.getAsJsonObject().get("annotations");
    if (annotations == null || !annotations.isJsonObject()) {
      return Optional.empty();
    }
    JsonElement v = annotations.getAsJsonObject().get(key);
    if (v == null || v.isJsonNull()) {
      return Optional.empty();
    }
    return Optional.of(v.isJsonPrimitive() ? v.getAsString() : v.toString());
  }

  /**
   * Builder for {@link NodeAnnotationLockStore}; validates in {@link #build()}. Not thread-safe.
   */
  public static final class Builder {
    private final ApiClient apiClient;
    private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private LockReleaseSignal releaseSignal;
    private String watchedKey;
    private Function<String, Optional<String>> watchedValues;
    private Duration maxRetryAfter = Duration.ofSeconds(5);

    private Builder(ApiClient apiClient) {
      this.apiClient = apiClient;
    }

    /**
     * @param requestTimeout whole-call timeout of each request (default 10 s); positive
     * @return this builder
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    /**
     * @param maxAttempts attempts per write (repeats after certain non-application) and per read
     *     (transient failures), default 5; 1..100
     * @return this builder
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * @param maxRetryAfter cap on an honoured {@code Retry-After} of a 429 (default 5 s); not
     *     negative
     * @return this builder
     */
    public Builder maxRetryAfter(Duration maxRetryAfter) {
      this.maxRetryAfter = maxRetryAfter;
      return this;
    }

    /**
     * @param releaseSignal the signal {@link #releaseSignal()} reports (e.g. fed by a {@code
     *     NodeLockWatch}); {@code null} for none
     * @return this builder
     */
    public Builder releaseSignal(LockReleaseSignal releaseSignal) {
      this.releaseSignal = releaseSignal;
      return this;
    }

    /**
     * A watched view of one lock annotation (in this library the node watch's {@link
     * dev.hamilock.k8s.watch.NodeLockWatch#observedLockValue(String, String)}), which supplies the
     * witness of a failed create instead of a GET when it shows the node locked by another value.
     * It may lag the API server by the event delivery time; that is safe because a witness is only
     * the precondition of the caller's next compare-and-set (a stale one makes that {@code test}
     * fail, and a failed replace reads the node for real) or a reason to wait (a release is still
     * signalled). The view must answer empty when it knows nothing or is not trustworthy (e.g. the
     * watch is down), never a guess; it is not consulted after an ambiguous attempt of the same
     * call. Default: none (always GET).
     *
     * @param key the annotation key the view covers; other keys always GET; non-blank
     * @param valueByNode the watched value of {@code key} by node name; empty if absent or unknown
     * @return this builder
     */
    public Builder watchedLockValues(String key, Function<String, Optional<String>> valueByNode) {
      this.watchedKey = key;
      this.watchedValues = valueByNode;
      return this;
    }

    /**
     * @return the store
     * @throws NullPointerException naming the setting if the request timeout or maxRetryAfter is
     *     null, or a watched view was given with a null key or function
     * @throws IllegalArgumentException naming the setting if the request timeout is not positive,
     *     maxAttempts is outside 1..100, maxRetryAfter is negative, or a watched view was given
     *     with a blank key
     */
    public NodeAnnotationLockStore build() {
      Validation.positive("requestTimeout", requestTimeout);
      Validation.attempts("maxAttempts", maxAttempts);
      Validation.notNegative("maxRetryAfter", maxRetryAfter);
      ApiFailures failures =
          new ApiFailures(maxAttempts, Duration.ofMillis(20), Duration.ofSeconds(1), maxRetryAfter);
      KubeHttp http = new KubeHttp(apiClient, null, requestTimeout);
      if (watchedKey != null || watchedValues != null) {
        requireNonBlank(watchedKey, "watchedLockValues key");
        Objects.requireNonNull(watchedValues, "watchedLockValues function");
      }
      return new NodeAnnotationLockStore(
          http,
          failures,
          maxAttempts,
          Optional.ofNullable(releaseSignal),
          watchedKey,
          watchedValues);
    }
  }
}
