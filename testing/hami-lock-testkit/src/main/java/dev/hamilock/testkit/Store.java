package dev.hamilock.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testkit.jsonpatch.JsonPatch;
import dev.hamilock.testkit.jsonpatch.MalformedPatchException;
import dev.hamilock.testkit.jsonpatch.MergePatch;
import dev.hamilock.testkit.jsonpatch.PatchNotApplicableException;
import dev.hamilock.testkit.selector.FieldSelector;
import dev.hamilock.testkit.selector.LabelSelector;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * The object store: one global revision counter under one monitor, so every single-object write is
 * linearizable (as with etcd). Stored {@link ObjectNode}s are never mutated after commit; readers
 * may serialise them outside the lock.
 *
 * <p>Semantics follow {@code staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go}
 * (create, update, delete with preconditions and finalizers), the type strategies under {@code
 * pkg/registry/core/} and {@code handlers/patch.go}.
 */
final class Store {
  static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  enum PatchType {
    MERGE,
    JSON,
    STRATEGIC
  }

  record ListResult(long revision, List<ObjectNode> items, String continueToken, long remaining) {}

  record DeleteResult(ObjectNode object, boolean deleted) {}

  private record HistoryEvent(
      String type, ResourceType rt, ObjectNode prev, ObjectNode next, long revision) {}

  private final Clock clock;
  private final int eventHistoryLimit;
  private final int writeHistoryLimit;
  private final Map<ResourceType, NavigableMap<String, ObjectNode>> objects = new HashMap<>();
  private final ArrayDeque<HistoryEvent> events = new ArrayDeque<>();
  private final List<Watcher> watchers = new ArrayList<>();

  /**
   * In-process watches of the testkit's own simulations: not HTTP watches, so not counted or
   * dropped.
   */
  private final List<Watcher> internalWatchers = new ArrayList<>();

  private final Map<String, ArrayDeque<WriteRecord>> histories = new HashMap<>();
  private long revision;
  private long compactedRevision;

  /** The revision of the last {@link #compact()}: older resourceVersions are gone "from etcd". */
  private long storageCompactedRevision;

  Store(Clock clock, int eventHistoryLimit, int writeHistoryLimit) {
    this.clock = clock;
    this.eventHistoryLimit = eventHistoryLimit;
    this.writeHistoryLimit = writeHistoryLimit;
    for (ResourceType t : ResourceType.ALL) {
      objects.put(t, new TreeMap<>());
    }
    revision = 1;
    compactedRevision = 1;
    for (String ns : List.of("default", "kube-system", "kube-public", "kube-node-lease")) {
      ObjectNode n = JSON.objectNode();
      n.putObject("metadata").put("name", ns);
      try {
        create(ResourceType.NAMESPACES, null, n, true, "seed");
      } catch (StatusError e) {
        throw new IllegalStateException(e);
      }
    }
  }

  // ---------------------------------------------------------------- helpers

  static String key(String ns, String name) {
    return (ns == null ? "" : ns) + "/" + name;
  }

  static Map<String, String> labels(ObjectNode obj) {
    JsonNode l = obj.path("metadata").path("labels");
    if (!l.isObject() || l.isEmpty()) {
      return Map.of();
    }
    Map<String, String> out = new HashMap<>();
    l.properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  /** Field selector value of {@code path} (dotted), {@code ""} when absent. */
  static String field(ObjectNode obj, String path) {
    JsonNode n = obj;
    for (String p : path.split("\\.")) {
      n = n.path(p);
    }
    if (n.isMissingNode() || n.isNull()) {
      return path.equals("spec.hostNetwork") || path.equals("spec.unschedulable") ? "false" : "";
    }
    return n.asText();
  }

  private String now() {
    return DateTimeFormatter.ISO_INSTANT.format(clock.instant().truncatedTo(ChronoUnit.SECONDS));
  }

  private static ObjectNode meta(ObjectNode obj) {
    JsonNode m = obj.get("metadata");
    if (m instanceof ObjectNode o) {
      return o;
    }
    return obj.putObject("metadata");
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? "" : v.asText();
  }

  /**
   * Go-struct round-trip approximation: null members disappear, empty ObjectMeta collections are
   * omitted (omitempty), annotation and label values must be strings.
   */
  private static void normalize(ResourceType rt, ObjectNode obj, String name, int badValueCode)
      throws StatusError {
    MergePatchNulls.prune(obj);
    ObjectNode m = meta(obj);
    for (String f : new String[] {"annotations", "labels"}) {
      JsonNode v = m.get(f);
      if (v == null) {
        continue;
      }
      if (!v.isObject()) {
        throw valueError(rt, name, badValueCode, "metadata." + f, "expected a map of strings");
      }
      Iterator<Map.Entry<String, JsonNode>> it = v.properties().iterator();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        if (!e.getValue().isTextual()) {
          String msg =
              "json: cannot unmarshal "
                  + e.getValue().getNodeType().name().toLowerCase()
                  + " into Go struct field ObjectMeta.metadata."
                  + f
                  + " of type string";
          if (badValueCode == 422) {
            throw StatusError.patchedObjectUndecodable(obj.toString(), msg);
          }
          throw valueError(rt, name, badValueCode, "metadata." + f + "." + e.getKey(), msg);
        }
      }
      if (v.isEmpty()) {
        m.remove(f);
      }
    }
    validateAnnotations(rt, name, m.path("annotations"));
    for (String f : new String[] {"finalizers", "managedFields", "ownerReferences"}) {
      JsonNode v = m.get(f);
      if (v != null && v.isContainerNode() && v.isEmpty()) {
        m.remove(f);
      }
    }
    for (String f :
        new String[] {"generateName", "namespace", "uid", "resourceVersion", "selfLink"}) {
      JsonNode v = m.get(f);
      if (v != null && v.isTextual() && v.asText().isEmpty()) {
        m.remove(f);
      }
    }
  }

  /** ObjectMeta validation's limit on all annotation keys and values together, bytes. */
  static final int TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

  private static final String QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
  private static final Pattern QUALIFIED_NAME = Pattern.compile(QUALIFIED_NAME_FMT);
  private static final String DNS1123_SUBDOMAIN_FMT =
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
  private static final Pattern DNS1123_SUBDOMAIN = Pattern.compile(DNS1123_SUBDOMAIN_FMT);
  private static final String QUALIFIED_NAME_ERR =
      "must consist of alphanumeric characters, '-', '_' or '.',"
          + " and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc',"
          + " regex used for validation is '"
          + QUALIFIED_NAME_FMT
          + "')";

  /**
   * apimachinery's ValidateAnnotations: every key (lower-cased) a qualified name, keys and values
   * together at most {@value #TOTAL_ANNOTATION_SIZE_LIMIT} bytes; the first failure is reported.
   */
  private static void validateAnnotations(ResourceType rt, String name, JsonNode annotations)
      throws StatusError {
    if (!annotations.isObject()) {
      return;
    }
    long total = 0;
    Iterator<Map.Entry<String, JsonNode>> it = annotations.properties().iterator();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      String problem = qualifiedNameProblem(e.getKey().toLowerCase(Locale.ROOT));
      if (problem != null) {
        throw StatusError.invalid(
            rt, name, "metadata.annotations", "Invalid value: \"" + e.getKey() + "\": " + problem);
      }
      total +=
          e.getKey().getBytes(StandardCharsets.UTF_8).length
              + e.getValue().asText().getBytes(StandardCharsets.UTF_8).length;
    }
    if (total > TOTAL_ANNOTATION_SIZE_LIMIT) {
      throw StatusError.invalid(
          rt,
          name,
          "metadata.annotations",
          "Too long: may not be more than " + TOTAL_ANNOTATION_SIZE_LIMIT + " bytes",
          "FieldValueTooLong");
    }
  }

  /**
   * apimachinery's IsQualifiedName: an optional DNS-1123 subdomain prefix (at most 253 characters)
   * and '/', then a name part of at most 63 characters.
   *
   * @return the first problem's message, or null when {@code key} is valid
   */
  static String qualifiedNameProblem(String key) {
    String[] parts = key.split("/", -1);
    String namePart;
    if (parts.length == 1) {
      namePart = parts[0];
    } else if (parts.length == 2) {
      String prefix = parts[0];
      namePart = parts[1];
      if (prefix.isEmpty()) {
        return "prefix part must be non-empty";
      }
      if (prefix.length() > 253) {
        return "prefix part must be no more than 253 bytes";
      }
      if (!DNS1123_SUBDOMAIN.matcher(prefix).matches()) {
        return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters,"
            + " '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used"
            + " for validation is '"
            + DNS1123_SUBDOMAIN_FMT
            + "')";
      }
    } else {
      return "a valid label key "
          + QUALIFIED_NAME_ERR
          + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
    }
    if (namePart.isEmpty()) {
      return "name part must be non-empty";
    }
    if (namePart.length() > 63) {
      return "name part must be no more than 63 bytes";
    }
    if (!QUALIFIED_NAME.matcher(namePart).matches()) {
      return "name part " + QUALIFIED_NAME_ERR;
    }
    return null;
  }

  private static StatusError valueError(
      ResourceType rt, String name, int code, String field, String msg) {
    if (code == 400) {
      return StatusError.badRequest(
          rt.kind()
              + " in version \""
              + rt.version()
              + "\" cannot be handled as a "
              + rt.kind()
              + ": "
              + msg);
    }
    return StatusError.invalid(rt, name, "patch", msg);
  }

  /** Null pruning shared with the merge patch engine. */
  private static final class MergePatchNulls {
    static void prune(JsonNode node) {
      if (node.isObject()) {
        ObjectNode o = (ObjectNode) node;
        List<String> drop = new ArrayList<>();
        o.properties()
            .forEach(
                e -> {
                  if (e.getValue().isNull()) {
                    drop.add(e.getKey());
                  } else {
                    prune(e.getValue());
                  }
                });
        o.remove(drop);
      } else if (node.isArray()) {
        for (JsonNode el : node) {
          prune(el);
        }
      }
    }
  }

  /** Checks kind/apiVersion/namespace of a request body and fills them in. */
  private static ObjectNode checkBody(ResourceType rt, String ns, JsonNode body)
      throws StatusError {
    if (body == null || !body.isObject()) {
      throw StatusError.badRequest(
          "json: cannot unmarshal "
              + (body == null ? "null" : body.getNodeType().name().toLowerCase())
              + " into Go value of type "
              + rt.kind());
    }
    ObjectNode obj = ((ObjectNode) body).deepCopy();
    String kind = text(obj, "kind");
    String apiVersion = text(obj, "apiVersion");
    if ((!kind.isEmpty() && !kind.equals(rt.kind()))
        || (!apiVersion.isEmpty() && !apiVersion.equals(rt.apiVersion()))) {
      throw StatusError.badRequest(
          kind
              + " in version \""
              + apiVersion
              + "\" cannot be handled as a "
              + rt.kind()
              + ": no kind \""
              + kind
              + "\" is registered for version \""
              + apiVersion
              + "\"");
    }
    ObjectNode fresh = JSON.objectNode();
    fresh.put("kind", rt.kind());
    fresh.put("apiVersion", rt.apiVersion());
    obj.remove("kind");
    obj.remove("apiVersion");
    fresh.setAll(obj);
    if (!fresh.has("metadata") || !fresh.get("metadata").isObject()) {
      fresh.putObject("metadata");
    }
    ObjectNode m = meta(fresh);
    if (rt.namespaced()) {
      String bodyNs = text(m, "namespace");
      if (ns != null) {
        if (!bodyNs.isEmpty() && !bodyNs.equals(ns)) {
          throw StatusError.badRequest(
              "the namespace of the provided object does not match the namespace sent on the request");
        }
        m.put("namespace", ns);
      } else if (bodyNs.isEmpty()) {
        m.put("namespace", "default");
      }
    } else {
      m.remove("namespace");
    }
    return fresh;
  }

  private NavigableMap<String, ObjectNode> table(ResourceType rt) {
    return objects.get(rt);
  }

  private ObjectNode current(ResourceType rt, String ns, String name) throws StatusError {
    ObjectNode cur = table(rt).get(key(rt.namespaced() ? ns : null, name));
    if (cur == null) {
      throw StatusError.notFound(rt, name);
    }
    return cur;
  }

  private static String randomSuffix() {
    String alphabet = "bcdfghjklmnpqrstvwxz2456789";
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 5; i++) {
      sb.append(alphabet.charAt(ThreadLocalRandom.current().nextInt(alphabet.length())));
    }
    return sb.toString();
  }

  // ---------------------------------------------------------------- commit

  /** Persists {@code next} (ADDED/MODIFIED) or removes it (DELETED); bumps the revision. */
  private ObjectNode commit(
      ResourceType rt,
      String type,
      ObjectNode prev,
      ObjectNode next,
      String verb,
      String subresource) {
    revision++;
    ObjectNode stored = next;
    meta(stored).put("resourceVersion", Long.toString(revision));
    ObjectNode m = meta(stored);
    String ns = rt.namespaced() ? text(m, "namespace") : null;
    String name = text(m, "name");
    String k = key(ns, name);
    if (type.equals("DELETED")) {
      table(rt).remove(k);
    } else {
      table(rt).put(k, stored);
    }
    events.addLast(new HistoryEvent(type, rt, prev, stored, revision));
    while (events.size() > eventHistoryLimit) {
      HistoryEvent dropped = events.removeFirst();
      compactedRevision = Math.max(compactedRevision, dropped.revision);
    }
    for (Watcher w : watchers) {
      if (w.type == rt) {
        w.offer(type, prev, stored, revision);
      }
    }
    for (Watcher w : internalWatchers) {
      if (w.type == rt) {
        w.offer(type, prev, stored, revision);
      }
    }
    if (writeHistoryLimit > 0) {
      ArrayDeque<WriteRecord> h =
          histories.computeIfAbsent(rt.plural() + "|" + k, x -> new ArrayDeque<>());
      h.addLast(new WriteRecord(revision, verb, subresource, type, clock.instant(), stored));
      while (h.size() > writeHistoryLimit) {
        h.removeFirst();
      }
    }
    return stored;
  }

  // ---------------------------------------------------------------- operations

  synchronized long revision() {
    return revision;
  }

  synchronized ObjectNode create(
      ResourceType rt, String ns, JsonNode body, boolean seeding, String verb) throws StatusError {
    ObjectNode obj = checkBody(rt, ns, body);
    ObjectNode m = meta(obj);
    String name = text(m, "name");
    if (name.isEmpty()) {
      String gen = text(m, "generateName");
      if (gen.isEmpty()) {
        throw StatusError.invalid(
            rt, "", "metadata.name", "Required value: name or generateName is required");
      }
      do {
        name = gen + randomSuffix();
      } while (table(rt).containsKey(key(rt.namespaced() ? text(m, "namespace") : null, name)));
      m.put("name", name);
    }
    normalize(rt, obj, name, 400);
    m = meta(obj);
    String objNs = rt.namespaced() ? text(m, "namespace") : null;
    if (rt.namespaced() && !table(ResourceType.NAMESPACES).containsKey(key(null, objNs))) {
      throw StatusError.notFound(ResourceType.NAMESPACES, objNs);
    }
    if (table(rt).containsKey(key(objNs, name))) {
      throw StatusError.alreadyExists(rt, name);
    }
    m.put("uid", UUID.randomUUID().toString());
    m.remove("resourceVersion");
    m.remove("deletionTimestamp");
    m.remove("deletionGracePeriodSeconds");
    m.remove("selfLink");
    m.put("creationTimestamp", now());
    if (rt.customResource() || rt == ResourceType.PODDISRUPTIONBUDGETS) {
      m.put("generation", 1);
      if (!seeding) {
        obj.remove("status");
      }
    } else {
      m.remove("generation");
    }
    if (rt == ResourceType.RESOURCECLAIMS && !seeding) {
      obj.putObject("status"); // resourceclaim/strategy.go PrepareForCreate; Go writes {}
    }
    if (rt == ResourceType.PODS) {
      defaultPod(obj, seeding);
    } else if (rt == ResourceType.NAMESPACES) {
      ObjectNode labels = m.has("labels") ? (ObjectNode) m.get("labels") : m.putObject("labels");
      labels.put("kubernetes.io/metadata.name", name);
      ObjectNode spec =
          obj.has("spec") && obj.get("spec").isObject()
              ? (ObjectNode) obj.get("spec")
              : obj.putObject("spec");
      if (!spec.has("finalizers")) {
        spec.putArray("finalizers").add("kubernetes");
      }
      obj.putObject("status").put("phase", "Active");
    }
    return commit(rt, "ADDED", null, obj, verb, "");
  }

  private static void defaultPod(ObjectNode pod, boolean seeding) {
    ObjectNode spec =
        pod.has("spec") && pod.get("spec").isObject()
            ? (ObjectNode) pod.get("spec")
            : pod.putObject("spec");
    if (!spec.has("restartPolicy")) {
      spec.put("restartPolicy", "Always");
    }
    if (!spec.has("dnsPolicy")) {
      spec.put("dnsPolicy", "ClusterFirst");
    }
    if (!spec.has("schedulerName")) {
      spec.put("schedulerName", "default-scheduler");
    }
    if (!spec.has("terminationGracePeriodSeconds")) {
      spec.put("terminationGracePeriodSeconds", 30);
    }
    if (!spec.has("containers")) {
      spec.putArray("containers");
    }
    if (!seeding || !pod.has("status")) {
      ObjectNode status = pod.putObject("status");
      status.put("phase", "Pending");
      status.put("qosClass", qosClass(spec));
    }
  }

  /**
   * BestEffort / Guaranteed / Burstable, as {@code pkg/apis/core/helper/qos} computes it
   * (simplified).
   */
  private static String qosClass(ObjectNode spec) {
    boolean any = false;
    boolean guaranteed = true;
    for (JsonNode c : spec.path("containers")) {
      JsonNode req = c.path("resources").path("requests");
      JsonNode lim = c.path("resources").path("limits");
      if (!req.isEmpty() || !lim.isEmpty()) {
        any = true;
      }
      for (String r : new String[] {"cpu", "memory"}) {
        JsonNode l = lim.get(r);
        JsonNode q = req.has(r) ? req.get(r) : l;
        if (l == null || !l.equals(q)) {
          guaranteed = false;
        }
      }
    }
    if (!any) {
      return "BestEffort";
    }
    return guaranteed ? "Guaranteed" : "Burstable";
  }

  /**
   * The budget check of kube-apiserver's eviction subresource ({@code
   * pkg/registry/core/pod/storage/eviction.go}): a Pending, Succeeded, Failed or deleting pod is
   * evicted without one; else the PodDisruptionBudgets of its namespace whose selector matches its
   * labels (an empty or invalid selector matches nothing): more than one is a 500; one whose status
   * is behind its generation, or allows no disruption, a 429 naming it; a negative allowance a 403;
   * else (unless the pod is not Ready and the budget is healthy without it) {@code
   * status.disruptionsAllowed} is decremented and the pod recorded in {@code disruptedPods}, as
   * checkAndDecrement does. Not modelled: the DisruptionAllowed condition, the 2000-pod cap on
   * {@code disruptedPods}.
   *
   * @throws StatusError the refusal, or 404 for a missing pod
   */
  synchronized void checkDisruption(String ns, String podName) throws StatusError {
    ObjectNode pod = current(ResourceType.PODS, ns, podName);
    String phase = pod.path("status").path("phase").asText("");
    if (List.of("Pending", "Succeeded", "Failed").contains(phase)
        || meta(pod).has("deletionTimestamp")) {
      return;
    }
    List<ObjectNode> budgets = new ArrayList<>();
    for (ObjectNode b :
        list(
                ResourceType.PODDISRUPTIONBUDGETS,
                ns,
                LabelSelector.EVERYTHING,
                FieldSelector.EVERYTHING,
                0,
                null)
            .items()) {
      if (selects(b.path("spec").path("selector"), labels(pod))) {
        budgets.add(b);
      }
    }
    if (budgets.size() > 1) {
      throw StatusError.custom(
          500,
          "",
          "This pod has more than one PodDisruptionBudget, which the eviction subresource does"
              + " not support.");
    }
    if (budgets.isEmpty()) {
      return;
    }
    ObjectNode pdb = budgets.get(0);
    String name = meta(pdb).path("name").asText();
    JsonNode st = pdb.path("status");
    boolean ready = false;
    for (JsonNode c : pod.path("status").path("conditions")) {
      ready |= c.path("type").asText().equals("Ready") && c.path("status").asText().equals("True");
    }
    int desired = st.path("desiredHealthy").asInt();
    if (!ready && st.path("currentHealthy").asInt() >= desired && desired > 0) {
      return;
    }
    if (st.path("observedGeneration").asLong() < meta(pdb).path("generation").asLong()) {
      throw StatusError.tooManyRequests(
          10, "The disruption budget " + name + " is still being processed by the server.");
    }
    int allowed = st.path("disruptionsAllowed").asInt();
    if (allowed < 0) {
      throw StatusError.custom(
          403,
          "Forbidden",
          "poddisruptionbudget.policy \""
              + name
              + "\" is forbidden: pdb disruptions allowed is negative");
    }
    if (allowed == 0) {
      throw StatusError.tooManyRequests(
          0,
          "The disruption budget "
              + name
              + " needs "
              + desired
              + " healthy pods and has "
              + st.path("currentHealthy").asInt()
              + " currently");
    }
    ObjectNode next = pdb.deepCopy();
    ObjectNode status = next.withObjectProperty("status");
    status.put("disruptionsAllowed", allowed - 1);
    status.withObjectProperty("disruptedPods").put(podName, now());
    update(ResourceType.PODDISRUPTIONBUDGETS, ns, name, next, true, "update");
  }

  /** metav1.LabelSelectorAsSelector then Matches; empty or invalid selects nothing. */
  private static boolean selects(JsonNode selector, Map<String, String> labels) {
    List<String> terms = new ArrayList<>();
    selector
        .path("matchLabels")
        .properties()
        .forEach(e -> terms.add(e.getKey() + "=" + e.getValue().asText()));
    for (JsonNode e : selector.path("matchExpressions")) {
      String key = e.path("key").asText();
      List<String> values = new ArrayList<>();
      e.path("values").forEach(v -> values.add(v.asText()));
      switch (e.path("operator").asText()) {
        case "In" -> terms.add(key + " in (" + String.join(",", values) + ")");
        case "NotIn" -> terms.add(key + " notin (" + String.join(",", values) + ")");
        case "Exists" -> terms.add(key);
        case "DoesNotExist" -> terms.add("!" + key);
        default -> {
          return false;
        }
      }
    }
    try {
      return !terms.isEmpty() && LabelSelector.parse(String.join(",", terms)).matches(labels);
    } catch (dev.hamilock.testkit.selector.SelectorParseException e) {
      return false;
    }
  }

  synchronized ObjectNode get(ResourceType rt, String ns, String name) throws StatusError {
    return current(rt, ns, name);
  }

  synchronized Optional<ObjectNode> find(ResourceType rt, String ns, String name) {
    return Optional.ofNullable(table(rt).get(key(rt.namespaced() ? ns : null, name)));
  }

  synchronized ListResult list(
      ResourceType rt,
      String ns,
      LabelSelector ls,
      FieldSelector fs,
      long limit,
      String startAfter) {
    NavigableMap<String, ObjectNode> t = table(rt);
    NavigableMap<String, ObjectNode> view = t;
    if (ns != null && rt.namespaced()) {
      view = t.subMap(ns + "/", true, ns + "/\uffff", true);
    }
    if (startAfter != null) {
      view = view.tailMap(startAfter, false);
    }
    List<ObjectNode> items = new ArrayList<>();
    String lastKey = null;
    long remaining = 0;
    for (Map.Entry<String, ObjectNode> e : view.entrySet()) {
      ObjectNode o = e.getValue();
      if (!ls.matches(labels(o)) || !fs.matches(f -> field(o, f))) {
        continue;
      }
      if (limit > 0 && items.size() >= limit) {
        remaining++;
        continue;
      }
      items.add(o);
      lastKey = e.getKey();
    }
    String cont = remaining > 0 ? lastKey : null;
    return new ListResult(revision, items, cont, remaining);
  }

  synchronized ObjectNode update(
      ResourceType rt, String ns, String name, JsonNode body, boolean status, String verb)
      throws StatusError {
    ObjectNode obj = checkBody(rt, ns, body);
    ObjectNode m = meta(obj);
    String bodyName = text(m, "name");
    if (!bodyName.equals(name)) {
      throw StatusError.badRequest(
          "the name of the object ("
              + bodyName
              + ") does not match the name on the URL ("
              + name
              + ")");
    }
    normalize(rt, obj, name, 400);
    ObjectNode cur = current(rt, ns, name);
    ObjectNode cm = meta(cur);
    String uid = text(meta(obj), "uid");
    if (!uid.isEmpty() && !uid.equals(text(cm, "uid"))) {
      throw StatusError.preconditionFailed(
          rt,
          ns,
          name,
          "Precondition failed: UID in precondition: "
              + uid
              + ", UID in object meta: "
              + text(cm, "uid"));
    }
    String rv = text(meta(obj), "resourceVersion");
    if (rv.isEmpty()) {
      if (rt.customResource()) {
        throw StatusError.invalid(
            rt,
            name,
            "metadata.resourceVersion",
            "Invalid value: 0x0: must be specified for an update");
      }
    } else if (!rv.equals(text(cm, "resourceVersion"))) {
      throw StatusError.optimisticLock(rt, name);
    }
    return applyUpdate(rt, cur, obj, status, verb, status ? "status" : "");
  }

  synchronized ObjectNode patch(
      ResourceType rt, String ns, String name, PatchType type, Object parsedPatch, boolean status)
      throws StatusError {
    ObjectNode cur = current(rt, ns, name);
    JsonNode patched;
    try {
      if (type == PatchType.JSON) {
        patched = ((JsonPatch) parsedPatch).apply(cur);
      } else {
        JsonNode p = (JsonNode) parsedPatch;
        if (type == PatchType.STRATEGIC) {
          p = stripDirectives(p.deepCopy());
        }
        patched = MergePatch.apply(cur, p);
      }
    } catch (PatchNotApplicableException e) {
      throw StatusError.patchRejected();
    } catch (MalformedPatchException e) {
      throw StatusError.badRequest(e.getMessage());
    }
    if (!patched.isObject()) {
      throw StatusError.invalid(
          rt,
          name,
          "patch",
          "json: cannot unmarshal "
              + patched.getNodeType().name().toLowerCase()
              + " into Go value of type "
              + rt.kind());
    }
    ObjectNode obj = (ObjectNode) patched;
    if (!text(obj, "kind").equals(rt.kind()) || !text(obj, "apiVersion").equals(rt.apiVersion())) {
      throw StatusError.invalid(rt, name, "patch", "kind and apiVersion may not be changed");
    }
    normalize(rt, obj, name, 422);
    ObjectNode m = meta(obj);
    if (!text(m, "name").equals(name)) {
      throw StatusError.badRequest(
          "the name of the object ("
              + text(m, "name")
              + ") does not match the name on the URL ("
              + name
              + ")");
    }
    if (rt.namespaced() && !text(m, "namespace").equals(ns)) {
      throw StatusError.badRequest(
          "the namespace of the provided object does not match the namespace sent on the request");
    }
    ObjectNode cm = meta(cur);
    String uid = text(m, "uid");
    if (!uid.isEmpty() && !uid.equals(text(cm, "uid"))) {
      throw StatusError.invalid(
          rt, name, "metadata.uid", "Invalid value: \"" + uid + "\": field is immutable");
    }
    String rv = text(m, "resourceVersion");
    if (!rv.isEmpty() && !rv.equals(text(cm, "resourceVersion"))) {
      throw StatusError.optimisticLock(rt, name);
    }
    return applyUpdate(rt, cur, obj, status, "patch", status ? "status" : "");
  }

  private static JsonNode stripDirectives(JsonNode p) {
    if (p.isObject()) {
      ObjectNode o = (ObjectNode) p;
      List<String> drop = new ArrayList<>();
      o.fieldNames()
          .forEachRemaining(
              f -> {
                if (f.startsWith("$")) {
                  drop.add(f);
                }
              });
      o.remove(drop);
      o.forEach(Store::stripDirectives);
    }
    return p;
  }

  /** The shared tail of PUT and PATCH: strategy resets, immutability, finalizers, no-op check. */
  private ObjectNode applyUpdate(
      ResourceType rt,
      ObjectNode cur,
      ObjectNode next,
      boolean statusSub,
      String verb,
      String subresource)
      throws StatusError {
    ObjectNode cm = meta(cur);
    String name = text(cm, "name");
    if (statusSub && rt.customResource()) {
      ObjectNode merged = cur.deepCopy();
      if (next.has("status")) {
        merged.set("status", next.get("status"));
      } else {
        merged.remove("status");
      }
      next = merged;
    }
    ObjectNode m = meta(next);
    for (String f :
        new String[] {
          "uid",
          "creationTimestamp",
          "deletionTimestamp",
          "deletionGracePeriodSeconds",
          "generation"
        }) {
      if (cm.has(f)) {
        m.set(f, cm.get(f));
      } else {
        m.remove(f);
      }
    }
    m.set("name", cm.get("name"));
    if (rt.namespaced()) {
      m.set("namespace", cm.get("namespace"));
    }
    if (rt.hasStatus() && !rt.customResource()) {
      if (statusSub) {
        copyField(cur, next, "spec");
        if (cm.has("ownerReferences")) {
          m.set("ownerReferences", cm.get("ownerReferences"));
        } else {
          m.remove("ownerReferences");
        }
      } else {
        copyField(cur, next, "status");
      }
    } else if (rt.customResource() && !statusSub) {
      copyField(cur, next, "status");
    }
    if (rt == ResourceType.PODS && !statusSub && !verb.equals("mutate")) {
      checkPodSpecUpdate(cur, next, name);
    }
    if (rt.customResource() && !withoutMetaStatus(cur).equals(withoutMetaStatus(next))) {
      m.put("generation", cm.path("generation").asLong(1) + 1);
    }
    m.set("resourceVersion", cm.get("resourceVersion"));
    if (m.has("deletionTimestamp") && !m.has("finalizers")) {
      return commit(rt, "DELETED", cur, next, verb, subresource);
    }
    if (next.equals(cur)) {
      return cur; // no-op: no new revision, no event
    }
    return commit(rt, "MODIFIED", cur, next, verb, subresource);
  }

  private static void copyField(ObjectNode from, ObjectNode to, String field) {
    if (from.has(field)) {
      to.set(field, from.get(field));
    } else {
      to.remove(field);
    }
  }

  private static ObjectNode withoutMetaStatus(ObjectNode o) {
    ObjectNode c = o.deepCopy();
    c.remove("metadata");
    c.remove("status");
    return c;
  }

  private static void checkPodSpecUpdate(ObjectNode cur, ObjectNode next, String name)
      throws StatusError {
    if (mutableStripped(cur.path("spec")).equals(mutableStripped(next.path("spec")))) {
      return;
    }
    throw StatusError.invalid(
        ResourceType.PODS,
        name,
        "spec",
        "Forbidden: pod updates may not change"
            + " fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
            + "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing"
            + " tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was"
            + " previously negative)",
        "FieldValueForbidden");
  }

  private static JsonNode mutableStripped(JsonNode spec) {
    if (!spec.isObject()) {
      return spec;
    }
    ObjectNode s = ((ObjectNode) spec).deepCopy();
    s.remove(
        List.of(
            "activeDeadlineSeconds",
            "tolerations",
            "terminationGracePeriodSeconds",
            "schedulingGates"));
    for (String list : new String[] {"containers", "initContainers"}) {
      for (JsonNode c : s.path(list)) {
        if (c instanceof ObjectNode co) {
          co.remove("image");
        }
      }
    }
    return s;
  }

  synchronized DeleteResult delete(
      ResourceType rt, String ns, String name, String preUid, String preRv, String verb)
      throws StatusError {
    ObjectNode cur = current(rt, ns, name);
    ObjectNode cm = meta(cur);
    if (preUid != null && !preUid.equals(text(cm, "uid"))) {
      throw StatusError.deletePreconditionFailed(
          rt, name, "UID", preUid, text(cm, "uid"), "deleted and then recreated");
    }
    if (preRv != null && !preRv.equals(text(cm, "resourceVersion"))) {
      throw StatusError.deletePreconditionFailed(
          rt, name, "ResourceVersion", preRv, text(cm, "resourceVersion"), "modified");
    }
    if (cm.has("finalizers")) {
      if (cm.has("deletionTimestamp")) {
        return new DeleteResult(cur, false);
      }
      ObjectNode next = cur.deepCopy();
      meta(next).put("deletionTimestamp", now());
      meta(next).put("deletionGracePeriodSeconds", 0);
      return new DeleteResult(commit(rt, "MODIFIED", cur, next, verb, ""), false);
    }
    if (rt == ResourceType.NAMESPACES) {
      for (ResourceType t : ResourceType.ALL) {
        if (t.namespaced()) {
          for (ObjectNode o :
              new ArrayList<>(table(t).subMap(name + "/", true, name + "/\uffff", true).values())) {
            commit(t, "DELETED", o, o.deepCopy(), "delete", "");
          }
        }
      }
    }
    return new DeleteResult(commit(rt, "DELETED", cur, cur.deepCopy(), verb, ""), true);
  }

  /** POST pods/{name}/binding, as {@code pkg/registry/core/pod/storage/storage.go} BindingREST. */
  synchronized void bind(String ns, String podName, JsonNode binding) throws StatusError {
    if (binding == null || !binding.isObject()) {
      throw StatusError.badRequest("json: cannot unmarshal into Go value of type Binding");
    }
    JsonNode bm = binding.path("metadata");
    String bindingName = bm.path("name").asText("");
    if (!bindingName.isEmpty() && !bindingName.equals(podName)) {
      throw StatusError.badRequest("name in URL does not match name in Binding object");
    }
    JsonNode target = binding.path("target");
    String targetKind = target.path("kind").asText("");
    String node = target.path("name").asText("");
    ResourceType rt = ResourceType.PODS;
    if (!targetKind.isEmpty() && !targetKind.equals("Node")) {
      throw StatusError.invalid(
          rt,
          podName,
          "target.kind",
          "Unsupported value: \"" + targetKind + "\": supported values: \"Node\", \"\"");
    }
    if (node.isEmpty()) {
      throw StatusError.invalid(rt, podName, "target.name", "Required value");
    }
    ObjectNode cur = current(rt, ns, podName);
    ObjectNode cm = meta(cur);
    String bindingUid = bm.path("uid").asText("");
    if (!bindingUid.isEmpty() && !bindingUid.equals(text(cm, "uid"))) {
      throw StatusError.preconditionFailed(
          rt,
          ns,
          podName,
          "Precondition failed: UID in precondition: "
              + bindingUid
              + ", UID in object meta: "
              + text(cm, "uid"));
    }
    String bindingRv = bm.path("resourceVersion").asText("");
    if (!bindingRv.isEmpty() && !bindingRv.equals(text(cm, "resourceVersion"))) {
      throw StatusError.preconditionFailed(
          rt,
          ns,
          podName,
          "Precondition failed: ResourceVersion in precondition: "
              + bindingRv
              + ", ResourceVersion in object meta: "
              + text(cm, "resourceVersion"));
    }
    ObjectNode details = JSON.objectNode().put("name", podName).put("kind", "pods/binding");
    if (cm.has("deletionTimestamp")) {
      throw StatusError.conflict(
          "pods/binding",
          details,
          podName,
          "pod " + podName + " is being deleted, cannot be assigned to a host");
    }
    String assigned = cur.path("spec").path("nodeName").asText("");
    if (!assigned.isEmpty()) {
      throw StatusError.conflict(
          "pods/binding",
          details,
          podName,
          "pod " + podName + " is already assigned to node \"" + assigned + "\"");
    }
    ObjectNode next = cur.deepCopy();
    ((ObjectNode) next.get("spec")).put("nodeName", node);
    JsonNode ann = bm.path("annotations");
    if (ann.isObject() && !ann.isEmpty()) {
      ObjectNode nm = meta(next);
      ObjectNode target2 =
          nm.has("annotations") ? (ObjectNode) nm.get("annotations") : nm.putObject("annotations");
      Iterator<Map.Entry<String, JsonNode>> it = ann.properties().iterator();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        target2.put(e.getKey(), e.getValue().asText());
      }
    }
    ObjectNode status =
        next.has("status") && next.get("status").isObject()
            ? (ObjectNode) next.get("status")
            : next.putObject("status");
    ArrayNode conds =
        status.has("conditions") && status.get("conditions").isArray()
            ? (ArrayNode) status.get("conditions")
            : status.putArray("conditions");
    for (int i = conds.size() - 1; i >= 0; i--) {
      if ("PodScheduled".equals(conds.get(i).path("type").asText())) {
        conds.remove(i);
      }
    }
    ObjectNode c = conds.addObject();
    c.put("type", "PodScheduled");
    c.put("status", "True");
    c.put("lastTransitionTime", now());
    commit(rt, "MODIFIED", cur, next, "create", "binding");
  }

  // ---------------------------------------------------------------- watch

  /**
   * Registers a watch. For {@code rv} null/""/"0" the current matching objects are queued as
   * synthetic ADDED events; otherwise history after {@code rv} is replayed, or an ERROR 410 is
   * queued when {@code rv} is older than the compacted revision.
   */
  synchronized Watcher watch(
      ResourceType rt, String ns, LabelSelector ls, FieldSelector fs, String rv)
      throws StatusError {
    Watcher w = new Watcher(rt, rt.namespaced() ? ns : null, ls, fs);
    if (rv == null || rv.isEmpty() || rv.equals("0")) {
      for (ObjectNode o : list(rt, ns, ls, fs, 0, null).items()) {
        w.offerRaw(new Watcher.Event("ADDED", o, revision));
      }
    } else {
      long from;
      try {
        from = Long.parseLong(rv);
      } catch (NumberFormatException e) {
        throw StatusError.badRequest(
            "invalid resource version: strconv.ParseUint: parsing \"" + rv + "\": invalid syntax");
      }
      if (from < compactedRevision) {
        String message =
            from < storageCompactedRevision
                ? "The resourceVersion for the provided watch is too old."
                : "too old resource version: " + from + " (" + compactedRevision + ")";
        w.offerRaw(new Watcher.Event("ERROR", StatusError.expired(message).toStatus(), revision));
        w.close();
        return w;
      }
      for (HistoryEvent e : events) {
        if (e.rt == rt && e.revision > from) {
          w.offer(e.type, e.prev, e.next, e.revision);
        }
      }
    }
    watchers.add(w);
    return w;
  }

  synchronized void unregister(Watcher w) {
    watchers.remove(w);
  }

  /**
   * Registers an in-process watch that starts with the current matching objects as ADDED events and
   * is neither counted by {@code openWatches()} nor ended by {@code dropWatches()}.
   */
  synchronized Watcher watchInternal(ResourceType rt, LabelSelector ls, FieldSelector fs) {
    Watcher w = new Watcher(rt, null, ls, fs);
    for (ObjectNode o : list(rt, null, ls, fs, 0, null).items()) {
      w.offerRaw(new Watcher.Event("ADDED", o, revision));
    }
    internalWatchers.add(w);
    return w;
  }

  synchronized void unregisterInternal(Watcher w) {
    internalWatchers.remove(w);
  }

  /** Queues a BOOKMARK at the current revision behind every event already queued. */
  synchronized void bookmark(Watcher w) {
    ObjectNode o = JSON.objectNode();
    o.put("kind", w.type.kind());
    o.put("apiVersion", w.type.apiVersion());
    o.putObject("metadata").put("resourceVersion", Long.toString(revision));
    w.offerRaw(new Watcher.Event("BOOKMARK", o, revision));
  }

  synchronized List<Watcher> watchers() {
    return List.copyOf(watchers);
  }

  /**
   * Forgets all event history: the revision is bumped once (no object changes) and every
   * resourceVersion below the new revision becomes too old to resume a watch from (410 Expired,
   * with the message kube-apiserver relays from a compacted etcd; a resourceVersion that only fell
   * out of the bounded event history gets the watch cache's "too old resource version").
   */
  synchronized long compact() {
    revision++;
    compactedRevision = revision;
    storageCompactedRevision = revision;
    events.clear();
    return revision;
  }

  synchronized List<WriteRecord> history(ResourceType rt, String ns, String name) {
    ArrayDeque<WriteRecord> h =
        histories.get(rt.plural() + "|" + key(rt.namespaced() ? ns : null, name));
    if (h == null) {
      return List.of();
    }
    List<WriteRecord> out = new ArrayList<>(h.size());
    for (WriteRecord r : h) {
      out.add(
          new WriteRecord(
              r.resourceVersion(),
              r.verb(),
              r.subresource(),
              r.eventType(),
              r.timestamp(),
              r.object().deepCopy()));
    }
    return out;
  }

  /**
   * @return the number of stored objects of {@code rt}
   */
  synchronized int size(ResourceType rt) {
    return table(rt).size();
  }
}
