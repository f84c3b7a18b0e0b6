package dev.hamilock.bind.cluster;

import static dev.hamilock.core.BackendFailure.Kind.UNAVAILABLE;
import static dev.hamilock.core.internal.Checks.checkArgument;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.core.BackendFailure;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The cluster ports' wire format on the Kubernetes API, shared by every client adapter so they send
 * the same bytes and read answers alike (request bodies, queries, answers); a client adds only the
 * transport. Stateless.
 */
public final class KubernetesWire {

  /** {@code k8s.io/apimachinery} IsValidLabelValue syntax (63 characters at most). */
  private static final Pattern LABEL_VALUE =
      Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");

  /** kube-apiserver's BindingREST text: {@code pod p is already assigned to node "n"}. */
  private static final Pattern ALREADY_ASSIGNED =
      Pattern.compile("already assigned to node \"([^\"]*)\"");

  /** k8s.io/apiserver {@code Preconditions.Check}'s text for a resourceVersion precondition. */
  private static final String RV_PRECONDITION = "ResourceVersion in precondition";

  private KubernetesWire() {}

  /**
   * The JSON merge patch (RFC 7386) body of a {@link MetadataPatch}: {@code null} for removals,
   * keys in byte order as Go's {@code encoding/json} sorts them (the body equals HAMi's, spec §2.2
   * step 6, §2.3 step 4), empty maps left out, {@code metadata.uid} then {@code resourceVersion}
   * last.
   */
  public static String mergePatch(MetadataPatch patch) {
    ObjectNode body = JsonNodeFactory.instance.objectNode();
    ObjectNode meta = JsonNodeFactory.instance.objectNode();
    putSorted(meta, "annotations", patch.annotations());
    putSorted(meta, "labels", patch.labels());
    patch.expectedUid().ifPresent(uid -> meta.put("uid", uid));
    patch.expectedResourceVersion().ifPresent(rv -> meta.put("resourceVersion", rv));
    if (!meta.isEmpty()) {
      body.set("metadata", meta);
    }
    return body.toString();
  }

  private static void putSorted(
      ObjectNode meta, String field, Map<String, Optional<String>> changes) {
    if (!changes.isEmpty()) {
      ObjectNode o = meta.putObject(field);
      new TreeMap<>(changes).forEach((k, v) -> o.put(k, v.orElse(null)));
    }
  }

  /**
   * @return the body of {@code POST .../pods/{name}/binding}, {@code uid} and {@code
   *     resourceVersion} (preconditions: {@link ClusterWriter#bind}) left out when ""
   */
  public static String binding(
      String namespace, String name, String uid, String resourceVersion, String node) {
    ObjectNode binding = JsonNodeFactory.instance.objectNode();
    binding.put("apiVersion", "v1").put("kind", "Binding");
    ObjectNode meta = binding.putObject("metadata").put("name", name).put("namespace", namespace);
    if (!uid.isEmpty()) {
      meta.put("uid", uid);
    }
    if (!resourceVersion.isEmpty()) {
      meta.put("resourceVersion", resourceVersion);
    }
    binding.putObject("target").put("apiVersion", "v1").put("kind", "Node").put("name", node);
    return binding.toString();
  }

  /**
   * @return the body of {@code POST .../pods/{name}/eviction}: a {@code policy/v1} Eviction, with
   *     {@code deleteOptions.preconditions.uid} when a UID is given
   */
  public static String eviction(String namespace, String name, String uid) {
    ObjectNode eviction = JsonNodeFactory.instance.objectNode();
    eviction.put("apiVersion", "policy/v1").put("kind", "Eviction");
    eviction.putObject("metadata").put("name", name).put("namespace", namespace);
    if (!uid.isEmpty()) {
      eviction.putObject("deleteOptions").putObject("preconditions").put("uid", uid);
    }
    return eviction.toString();
  }

  /**
   * @return a core/v1 Event on the pod, {@code generateName: <pod>.}, {@code source.component}
   *     {@code hami-lock}, {@code count: 1}, first and last timestamp {@code now} (to the second)
   * @throws IllegalArgumentException naming a type neither {@code Normal} nor {@code Warning}
   */
  public static String podEvent(
      String namespace,
      String name,
      String uid,
      String type,
      String reason,
      String message,
      Instant now) {
    checkArgument(
        type.equals("Normal") || type.equals("Warning"),
        "event type must be Normal or Warning: %s",
        type);
    String at = now.truncatedTo(ChronoUnit.SECONDS).toString();
    ObjectNode event = JsonNodeFactory.instance.objectNode();
    event.put("apiVersion", "v1").put("kind", "Event");
    event.putObject("metadata").put("generateName", name + ".").put("namespace", namespace);
    ObjectNode involved =
        event
            .putObject("involvedObject")
            .put("apiVersion", "v1")
            .put("kind", "Pod")
            .put("name", name)
            .put("namespace", namespace);
    if (uid != null && !uid.isEmpty()) {
      involved.put("uid", uid);
    }
    event.put("reason", reason).put("message", message).put("type", type);
    event.putObject("source").put("component", "hami-lock");
    event.put("count", 1).put("firstTimestamp", at).put("lastTimestamp", at);
    return event.toString();
  }

  /**
   * The {@code GET /api/v1/pods} queries of {@link ClusterReader#listPodsAssignedTo}, in order: the
   * unbound pods labelled {@code hami.io/vgpu-node=<node>}, then the pods bound to the node (a pod
   * bound between the two is in the second); one query for all pods if the node name cannot be a
   * label value.
   */
  public static List<Map<String, String>> assignedToQueries(String node) {
    if (node.length() > 63 || !LABEL_VALUE.matcher(node).matches()) {
      return List.of(Map.of());
    }
    Map<String, String> unbound = new LinkedHashMap<>();
    unbound.put("labelSelector", HamiAnnotations.VGPU_NODE + "=" + node);
    unbound.put("fieldSelector", "spec.nodeName=");
    return List.of(unbound, Map.of("fieldSelector", "spec.nodeName=" + node));
  }

  /**
   * {@link ClusterReader#listPodsAssignedTo} through one client: the bound pods' list on {@code
   * executor} ({@link ForkedRead}) beside the unbound pods'. A pod bound at revision t is in the
   * unbound list (snapshot U) iff t &gt; U and in the bound list (B) iff t &le; B, so with U &le; B
   * none is missed; otherwise (or a non-integer version) the bound pods are listed again after the
   * unbound answer. Versions of one resource compare as integers (KEP-5504, apimachinery {@code
   * CompareResourceVersion}). Keeps pods whose {@code hami.io/vgpu-node} names the node, each once,
   * as its later version.
   *
   * @param executor runs the second list; null: in sequence
   * @throws ClusterException a list's, or {@link ClusterException.Kind#REJECTED} for a malformed
   *     pod
   */
  public static List<ClusterPod> assignedTo(String node, PodList list, Executor executor)
      throws ClusterException {
    String what = "LIST pods assigned to node " + node;
    List<Map<String, String>> queries = assignedToQueries(node);
    List<JsonNode> lists = new ArrayList<>();
    if (queries.size() == 1) {
      lists.add(list.list(what, queries.get(0)));
    } else {
      FutureTask<JsonNode> bound =
          ForkedRead.start(executor, () -> list.list(what, queries.get(1)));
      lists.add(list.list(what, queries.get(0)));
      JsonNode b = ForkedRead.join(bound);
      long u = listVersion(lists.get(0));
      lists.add(u > 0 && u <= listVersion(b) ? b : list.list(what, queries.get(1)));
    }
    Map<String, ClusterPod> byKey = new LinkedHashMap<>();
    for (JsonNode l : lists) {
      for (JsonNode item : l.path("items")) {
        if (item.isObject()
            && node.equals(
                item.path("metadata")
                    .path("annotations")
                    .path(HamiAnnotations.VGPU_NODE)
                    .textValue())) {
          ClusterPod p = pod(what, item);
          byKey.remove(p.key());
          byKey.put(p.key(), p);
        }
      }
    }
    return new ArrayList<>(byKey.values());
  }

  /**
   * {@code query} plus {@code resourceVersion=version&resourceVersionMatch=NotOlderThan}
   * (Kubernetes API concepts, "Semantics for get and list"): data at least as new as {@code
   * version}.
   */
  public static Map<String, String> notOlderThan(Map<String, String> query, String version) {
    Map<String, String> q = new LinkedHashMap<>(query);
    q.put("resourceVersion", version);
    q.put("resourceVersionMatch", "NotOlderThan");
    return q;
  }

  /** A list's {@code metadata.resourceVersion}; 0 unless a positive integer. */
  private static long listVersion(JsonNode list) {
    return Math.max(0, resourceVersion(list.path("metadata").path("resourceVersion").asText("")));
  }

  /**
   * A {@code resourceVersion} as the integer KEP-5504 lets a client compare within one resource
   * (apimachinery {@code CompareResourceVersion}: decimal, no leading zero).
   *
   * @return the version, -1 if {@code version} is null or not such an integer (up to 18 digits)
   */
  public static long resourceVersion(String version) {
    return version != null && version.matches("[1-9][0-9]{0,17}") ? Long.parseLong(version) : -1;
  }

  /** One {@code GET /api/v1/pods} through a client, answering the {@code PodList} object. */
  @FunctionalInterface
  public interface PodList {
    JsonNode list(String what, Map<String, String> query) throws ClusterException;
  }

  /**
   * @return its pods in list order
   * @throws ClusterException {@link ClusterException.Kind#REJECTED} for a malformed pod
   */
  public static List<ClusterPod> pods(String what, JsonNode list) throws ClusterException {
    List<ClusterPod> out = new ArrayList<>();
    for (JsonNode item : list.path("items")) {
      if (item.isObject()) {
        out.add(pod(what, item));
      }
    }
    return out;
  }

  /**
   * @return the pod with its {@code spec.nodeName} and {@code metadata.resourceVersion}
   * @throws ClusterException {@link ClusterException.Kind#REJECTED} naming the malformed field
   */
  public static ClusterPod pod(String what, JsonNode o) throws ClusterException {
    PodView view;
    try {
      view = JsonViews.podView(o);
    } catch (MalformedObjectException e) {
      throw new ClusterException(ClusterException.Kind.REJECTED, what + ": " + e.getMessage(), e);
    }
    JsonNode rv = o.path("metadata").path("resourceVersion");
    return new ClusterPod(view, view.nodeName(), rv.isTextual() ? rv.textValue() : "");
  }

  /**
   * The Binding POST's answer mapped as kube-apiserver's BindingREST ({@code
   * pkg/registry/core/pod/storage/storage.go}) answers it: 2xx ⇒ BOUND; no answer (status 0), 429,
   * 5xx ⇒ AMBIGUOUS (may have been applied, HAMi#2645; never repeated); 404 and 409 UID
   * precondition ⇒ NOT_FOUND ({@link BackendFailure#classify}); 409 {@code already assigned to node
   * "X"} ⇒ ALREADY_BOUND with X (else the node {@code reread} reads); 409 ResourceVersion
   * precondition (checked first) ⇒ ALREADY_BOUND with the node {@code reread} reads, else CONFLICT;
   * anything else ⇒ REJECTED. Every result but BOUND carries the status (if any) and {@code cause}.
   */
  public static BindingPostResult bindingAnswer(
      int status,
      String body,
      String what,
      String detail,
      Throwable cause,
      ClusterCall<Optional<String>> reread) {
    if (status >= 200 && status < 300) {
      return BindingPostResult.bound(); // applied; only the answer body was unexpected
    }
    BindingPostResult r;
    if (status == 0 || status == 429 || status >= 500) {
      r = BindingPostResult.ambiguous(what + ": " + detail);
    } else if (BackendFailure.classify(status, body, false) == ClusterException.Kind.NOT_FOUND) {
      r = BindingPostResult.notFound(what + ": " + detail);
    } else if (status == 409
        && (body.contains("already assigned to node") || body.contains(RV_PRECONDITION))) {
      boolean assigned = !body.contains(RV_PRECONDITION);
      Matcher m = ALREADY_ASSIGNED.matcher(body);
      Optional<String> node = Optional.empty();
      if (assigned && m.find() && !m.group(1).isBlank()) {
        node = Optional.of(m.group(1));
      } else {
        try {
          node = reread.call();
        } catch (ClusterException e) {
          detail += "; the pod's node could not be read: " + e.getMessage();
        }
      }
      r =
          node.isPresent()
              ? BindingPostResult.alreadyBound(node.get())
              : assigned
                  ? new BindingPostResult(
                      BindingPostResult.Kind.ALREADY_BOUND, Optional.empty(), what + ": " + detail)
                  : BindingPostResult.conflict(what + ": " + detail);
    } else {
      r = BindingPostResult.rejected(what + ": " + detail);
    }
    return r.withAnswer(
        status >= 100 && status <= 599 ? OptionalInt.of(status) : OptionalInt.empty(), cause);
  }

  /** A read for {@link #bindingAnswer}. */
  @FunctionalInterface
  public interface ClusterCall<T> {
    T call() throws ClusterException;
  }

  /** One GET through a client: its 2xx answer as a JSON object, empty on 404. */
  @FunctionalInterface
  public interface Get {
    Optional<JsonNode> get(String what, String path, Map<String, String> query)
        throws ClusterException;
  }

  /**
   * The reads of {@link ClusterReader#readDra} for one client: discovery ({@code GET
   * /apis/resource.k8s.io/v1}) once; where served, per call a LIST of ResourceSlices (by node when
   * one is asked) and one of ResourceClaims, consistent or from the watch cache; where not (404),
   * {@link DraObjects#NONE} and no request for {@link #REPROBE}, then discovery again. A LIST
   * answered 404 after discovery said served (an HA control plane mid-upgrade) fails the read. The
   * claims' LIST may run beside the slices' ({@link ForkedRead}): two resources' versions order
   * nothing between them, and each, issued after the call began, is as fresh as required.
   * Thread-safe.
   */
  public static final class DraReads {
    private static final String DRA = "apis/resource.k8s.io/v1";

    /** {@code resourceVersion=0}: served from kube-apiserver's watch cache without waiting. */
    private static final Map<String, String> FROM_WATCH_CACHE = Map.of("resourceVersion", "0");

    /** How long an answer that {@link #DRA} is not served is believed: 1 minute. */
    public static final Duration REPROBE = Duration.ofMinutes(1);

    private final Get get;
    private final LongSupplier nanoTime;

    /** Whether {@link #DRA} is served, as discovery last answered. */
    private volatile boolean served;

    /** While not {@link #served}: the {@link #nanoTime} from which discovery is asked again. */
    private volatile long askAt;

    public DraReads(Get get) {
      this(get, System::nanoTime);
    }

    DraReads(Get get, LongSupplier nanoTime) {
      this.get = Objects.requireNonNull(get, "get");
      this.nanoTime = nanoTime;
      this.askAt = nanoTime.getAsLong();
    }

    /**
     * @param fromWatchCache whether the LISTs may be served from the watch cache ({@link
     *     ClusterReader#readDraForFilter})
     * @param executor runs the claims' LIST beside the slices'; null: in sequence, slices first
     * @throws ClusterException when a read fails (the slices' first), {@link
     *     ClusterException.Kind#REJECTED} naming a malformed object, {@link
     *     ClusterException.Kind#UNAVAILABLE} naming a LIST answered 404 although discovery said
     *     {@code resource.k8s.io/v1} is served
     */
    public DraObjects read(Collection<String> nodes, boolean fromWatchCache, Executor executor)
        throws ClusterException {
      Objects.requireNonNull(nodes, "nodes");
      if (nodes.isEmpty() || (!served && nanoTime.getAsLong() - askAt < 0)) {
        return DraObjects.NONE;
      }
      if (!served) {
        if (get.get("GET /" + DRA, DRA, Map.of()).isEmpty()) {
          askAt = nanoTime.getAsLong() + REPROBE.toNanos();
          return DraObjects.NONE;
        }
        served = true;
      }
      Map<String, String> onNode = new LinkedHashMap<>();
      if (nodes.size() == 1) {
        onNode.put("fieldSelector", "spec.nodeName=" + nodes.iterator().next());
      }
      Map<String, String> anywhere = fromWatchCache ? FROM_WATCH_CACHE : Map.of();
      onNode.putAll(anywhere);
      FutureTask<Optional<JsonNode>> claimList =
          ForkedRead.start(
              executor, () -> get.get("LIST resourceclaims", DRA + "/resourceclaims", anywhere));
      Optional<JsonNode> slices = get.get("LIST resourceslices", DRA + "/resourceslices", onNode);
      Optional<JsonNode> claims = ForkedRead.join(claimList);
      if (slices.isEmpty() || claims.isEmpty()) { // discovery said served: not believed absent
        askAt = nanoTime.getAsLong(); // the next read asks discovery again
        served = false;
        String why =
            "LIST %s answered 404 although /%s is served: the devices it allocates cannot be"
                + " counted";
        String which = slices.isEmpty() ? "resourceslices" : "resourceclaims";
        throw new ClusterException(UNAVAILABLE, why.formatted(which, DRA), null);
      }
      List<ResourceSliceView> sliceViews = new ArrayList<>();
      List<ResourceClaimView> claimViews = new ArrayList<>();
      try {
        for (JsonNode item : slices.get().path("items")) {
          sliceViews.add(JsonViews.resourceSliceView(item));
        }
        for (JsonNode item : claims.get().path("items")) {
          claimViews.add(JsonViews.resourceClaimView(item));
        }
      } catch (MalformedObjectException e) {
        throw new ClusterException(
            ClusterException.Kind.REJECTED, "reading /" + DRA + ": " + e.getMessage(), e);
      }
      return new DraObjects(sliceViews, claimViews);
    }
  }
}
