package dev.hamilock.device.spi.view;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The schema-free reader of core/v1 Pod and Node JSON (API answers, watch events, extender
 * requests) and of {@code resource.k8s.io/v1} ResourceSlice and ResourceClaim JSON into the views
 * of this package, which name the fields read; every other field is ignored. Its typed counterpart
 * for client-java models, {@code KubernetesViews}, gives equal views.
 *
 * <p>Rules are those of Go's {@code encoding/json} into the core/v1 types: an absent or {@code
 * null} object, list, map or string reads as empty and a {@code null} map entry as absent; a field
 * of the wrong JSON type is rejected; quantities are read by {@link Quantities#parse} from a string
 * or number; {@code metadata.name}, a pod's {@code metadata.namespace} (never guessed as {@code
 * default}) and container names must be non-empty. Violations throw {@link
 * MalformedObjectException} naming the field path from {@code Pod.}, {@code Node.}, {@code
 * ResourceSlice[name].} or {@code ResourceClaim[namespace/name].}. Thread-safe.
 */
public final class JsonViews {

  /** Strict single-document parser; decimals kept exact (no {@code double} rounding). */
  private static final JsonMapper MAPPER =
      JsonMapper.builder()
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .build();

  private JsonViews() {}

  /**
   * Parses UTF-8 JSON text: one object (a Pod, a Node, a list answer, a watch event).
   *
   * @throws MalformedObjectException with field "" if the text is not exactly one JSON object
   */
  public static JsonNode readObject(byte[] json) throws MalformedObjectException {
    JsonNode n;
    try {
      n = MAPPER.readTree(json);
    } catch (JacksonException e) {
      throw new MalformedObjectException("", "", "malformed JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new MalformedObjectException("", "", "unreadable JSON: " + e.getMessage(), e);
    }
    if (n == null || !n.isObject()) {
      throw new MalformedObjectException(
          "", n == null ? "" : abbreviate(n), "expected a JSON object", null);
    }
    return n;
  }

  /**
   * @return the Pod's view (phase absent ⇒ PENDING, unknown phase text ⇒ UNKNOWN; {@code nodeName}
   *     empty while unbound)
   * @throws MalformedObjectException naming the field when the namespace, name or a container name
   *     is missing or a quantity malformed
   */
  public static PodView podView(JsonNode pod) throws MalformedObjectException {
    requireObject(pod, "Pod");
    JsonNode meta = object(pod, "metadata", "Pod.metadata");
    String name = required(meta, "name", "Pod.metadata.name", "");
    String namespace = required(meta, "namespace", "Pod.metadata.namespace", " (pod " + name + ")");
    JsonNode spec = object(pod, "spec", "Pod.spec");
    JsonNode group = object(spec, "schedulingGroup", "Pod.spec.schedulingGroup");
    String groupName = text(group, "podGroupName", "Pod.spec.schedulingGroup.podGroupName");
    JsonNode status = object(pod, "status", "Pod.status");
    JsonNode deletion = present(meta, "deletionTimestamp");
    JsonNode priority = present(spec, "priority"); // Go's *int32: absent or null ⇒ 0
    if (priority != null && !(priority.isIntegralNumber() && priority.canConvertToInt())) {
      throw wrongType("Pod.spec.priority", "an int32", priority);
    }
    return PodView.builder(namespace, name)
        .uid(text(meta, "uid", "Pod.metadata.uid"))
        .labels(map(meta, "labels", "Pod.metadata.labels", JsonViews::string))
        .annotations(map(meta, "annotations", "Pod.metadata.annotations", JsonViews::string))
        .podGroupName(groupName.isEmpty() ? null : groupName)
        .phase(PodView.Phase.fromKubernetes(text(status, "phase", "Pod.status.phase")))
        .deleting(deletion != null)
        .initContainers(containers(spec, "initContainers"))
        .containers(containers(spec, "containers"))
        .nodeName(text(spec, "nodeName", "Pod.spec.nodeName"))
        .draResources(draResources(status))
        .resourceClaimNames(resourceClaimNames(spec, status))
        .priority(priority == null ? 0 : priority.intValue())
        .preemptionPolicy(text(spec, "preemptionPolicy", "Pod.spec.preemptionPolicy"))
        .unschedulable(unschedulable(status))
        .build();
  }

  /**
   * Reads a core/v1 Node, {@code status.allocatable} as exact decimals.
   *
   * @throws MalformedObjectException naming the field when the name is missing or a quantity
   *     malformed
   */
  public static NodeView nodeView(JsonNode node) throws MalformedObjectException {
    requireObject(node, "Node");
    JsonNode meta = object(node, "metadata", "Node.metadata");
    String name = required(meta, "name", "Node.metadata.name", "");
    JsonNode status = object(node, "status", "Node.status");
    return new NodeView(
        name,
        map(meta, "labels", "Node.metadata.labels", JsonViews::string),
        map(meta, "annotations", "Node.metadata.annotations", JsonViews::string),
        map(status, "allocatable", "Node.status.allocatable", JsonViews::quantity));
  }

  /**
   * Reads a {@code resource.k8s.io/v1} ResourceSlice (the fields {@link ResourceSliceView} names).
   *
   * @throws MalformedObjectException naming the field when a name, the driver or the pool name is
   *     missing, an attribute sets not exactly one value, or a capacity is not a quantity &ge; 0
   */
  public static ResourceSliceView resourceSliceView(JsonNode slice)
      throws MalformedObjectException {
    requireObject(slice, "ResourceSlice");
    JsonNode meta = object(slice, "metadata", "ResourceSlice.metadata");
    String name = required(meta, "name", "ResourceSlice.metadata.name", "");
    String p = "ResourceSlice[" + name + "].spec";
    JsonNode spec = object(slice, "spec", p);
    JsonNode pool = object(spec, "pool", p + ".pool");
    JsonNode gen = present(pool, "generation");
    if (gen != null && !(gen.isIntegralNumber() && gen.canConvertToLong())) {
      throw wrongType(p + ".pool.generation", "an int64", gen);
    }
    JsonNode arr = array(spec, "devices", p + ".devices");
    List<ResourceSliceView.Device> devices = new ArrayList<>();
    for (int i = 0; arr != null && i < arr.size(); i++) {
      String dp = p + ".devices[" + i + "]";
      requireObject(arr.get(i), dp);
      devices.add(
          new ResourceSliceView.Device(
              required(arr.get(i), "name", dp + ".name", ""),
              map(arr.get(i), "attributes", dp + ".attributes", JsonViews::attribute),
              map(arr.get(i), "capacity", dp + ".capacity", JsonViews::capacity)));
    }
    return new ResourceSliceView(
        name,
        required(spec, "driver", p + ".driver", ""),
        required(pool, "name", p + ".pool.name", ""),
        gen == null ? 0 : gen.longValue(),
        text(spec, "nodeName", p + ".nodeName"),
        devices);
  }

  /**
   * Reads a ResourceClaim (the fields {@link ResourceClaimView} names; an empty {@code shareID} is
   * absent).
   *
   * @throws MalformedObjectException naming the field when the namespace, name, or a result's
   *     driver, pool or device is missing, or a consumed capacity is not a quantity &ge; 0
   */
  public static ResourceClaimView resourceClaimView(JsonNode claim)
      throws MalformedObjectException {
    requireObject(claim, "ResourceClaim");
    JsonNode meta = object(claim, "metadata", "ResourceClaim.metadata");
    String name = required(meta, "name", "ResourceClaim.metadata.name", "");
    String ns =
        required(meta, "namespace", "ResourceClaim.metadata.namespace", " (claim " + name + ")");
    String p = "ResourceClaim[" + ns + "/" + name + "].status";
    JsonNode status = object(claim, "status", p);
    Set<String> reservedFor = new TreeSet<>();
    texts(status, "reservedFor", "uid", p + ".reservedFor", reservedFor);
    reservedFor.remove("");
    JsonNode alloc = object(status, "allocation", p + ".allocation");
    p += ".allocation";
    JsonNode arr =
        array(object(alloc, "devices", p + ".devices"), "results", p + ".devices.results");
    List<ResourceClaimView.Result> results = new ArrayList<>();
    for (int i = 0; arr != null && i < arr.size(); i++) {
      String rp = p + ".devices.results[" + i + "]";
      JsonNode r = arr.get(i);
      requireObject(r, rp);
      JsonNode admin = present(r, "adminAccess");
      if (admin != null && !admin.isBoolean()) {
        throw wrongType(rp + ".adminAccess", "a bool", admin);
      }
      String share = text(r, "shareID", rp + ".shareID");
      results.add(
          new ResourceClaimView.Result(
              required(r, "driver", rp + ".driver", ""),
              required(r, "pool", rp + ".pool", ""),
              required(r, "device", rp + ".device", ""),
              share.isEmpty() ? Optional.empty() : Optional.of(share),
              map(r, "consumedCapacity", rp + ".consumedCapacity", JsonViews::nonNegative),
              admin != null && admin.asBoolean()));
    }
    return new ResourceClaimView(
        ns,
        name,
        text(meta, "uid", "ResourceClaim.metadata.uid"),
        alloc != null,
        allocationNode(alloc, p + ".nodeSelector"),
        results,
        reservedFor);
  }

  /**
   * The node of a selector with the one term {@code matchFields metadata.name In [node]}, or "".
   */
  private static String allocationNode(JsonNode alloc, String p) throws MalformedObjectException {
    JsonNode terms =
        array(object(alloc, "nodeSelector", p), "nodeSelectorTerms", p + ".nodeSelectorTerms");
    String at = p + ".nodeSelectorTerms[0].matchFields";
    JsonNode fields =
        terms == null || terms.size() != 1 ? null : array(terms.get(0), "matchFields", at);
    JsonNode r = fields == null || fields.size() != 1 ? null : fields.get(0);
    JsonNode values = r == null ? null : array(r, "values", at + "[0].values");
    boolean byName =
        values != null
            && values.size() == 1
            && text(r, "key", at + "[0].key").equals("metadata.name")
            && text(r, "operator", at + "[0].operator").equals("In");
    return byName ? values.get(0).asText() : "";
  }

  /** A device attribute: exactly one value field set ({@code DeviceAttribute}). */
  private static String attribute(JsonNode v, String at) throws MalformedObjectException {
    requireObject(v, at);
    List<JsonNode> set = v.valueStream().filter(n -> !n.isNull()).toList();
    if (set.size() != 1) {
      throw new MalformedObjectException(
          at, abbreviate(v), "expected exactly one of int, bool, string, version", null);
    }
    return set.get(0).isTextual() ? set.get(0).textValue() : set.get(0).toString();
  }

  /** A {@code DeviceCapacity}: its required {@code value}, a quantity &ge; 0. */
  private static BigDecimal capacity(JsonNode v, String at) throws MalformedObjectException {
    requireObject(v, at);
    if (present(v, "value") == null) {
      throw new MalformedObjectException(at + ".value", "", "missing", null);
    }
    return nonNegative(v.get("value"), at + ".value");
  }

  private static BigDecimal nonNegative(JsonNode v, String at) throws MalformedObjectException {
    BigDecimal q = quantity(v, at);
    if (q.signum() < 0) {
      throw new MalformedObjectException(at, abbreviate(v), "expected a quantity >= 0", null);
    }
    return q;
  }

  /** {@code status.extendedResourceClaimStatus.requestMappings[].resourceName}. */
  private static Set<String> draResources(JsonNode status) throws MalformedObjectException {
    String path = "Pod.status.extendedResourceClaimStatus";
    JsonNode arr =
        array(
            object(status, "extendedResourceClaimStatus", path),
            "requestMappings",
            path + ".requestMappings");
    Set<String> out = new TreeSet<>();
    for (int i = 0; arr != null && i < arr.size(); i++) {
      String at = path + ".requestMappings[" + i + "].resourceName";
      String name = text(arr.get(i), "resourceName", at);
      if (!name.isEmpty()) {
        out.add(name);
      }
    }
    return out;
  }

  /**
   * {@link PodView#resourceClaimNames()}: {@code spec.resourceClaims[].resourceClaimName}, {@code
   * status.resourceClaimStatuses[].resourceClaimName} and {@code
   * status.extendedResourceClaimStatus.resourceClaimName}, each when set and non-empty.
   */
  private static Set<String> resourceClaimNames(JsonNode spec, JsonNode status)
      throws MalformedObjectException {
    Set<String> out = new TreeSet<>();
    texts(spec, "resourceClaims", "resourceClaimName", "Pod.spec.resourceClaims", out);
    String statuses = "Pod.status.resourceClaimStatuses";
    texts(status, "resourceClaimStatuses", "resourceClaimName", statuses, out);
    String path = "Pod.status.extendedResourceClaimStatus";
    out.add(
        text(
            object(status, "extendedResourceClaimStatus", path),
            "resourceClaimName",
            path + ".resourceClaimName"));
    out.remove("");
    return out;
  }

  /** Adds {@code parent.field[].key} (text, "" when unset) to {@code out}. */
  private static void texts(JsonNode parent, String field, String key, String path, Set<String> out)
      throws MalformedObjectException {
    JsonNode arr = array(parent, field, path);
    for (int i = 0; arr != null && i < arr.size(); i++) {
      String at = path + "[" + i + "]";
      requireObject(arr.get(i), at);
      out.add(text(arr.get(i), key, at + "." + key));
    }
  }

  /** {@link PodView#unschedulable()}: a {@code PodScheduled} condition False/Unschedulable. */
  private static boolean unschedulable(JsonNode status) throws MalformedObjectException {
    JsonNode arr = array(status, "conditions", "Pod.status.conditions");
    for (int i = 0; arr != null && i < arr.size(); i++) {
      String at = "Pod.status.conditions[" + i + "]";
      requireObject(arr.get(i), at);
      if (text(arr.get(i), "type", at + ".type").equals("PodScheduled")) {
        return text(arr.get(i), "status", at + ".status").equals("False")
            && text(arr.get(i), "reason", at + ".reason").equals("Unschedulable");
      }
    }
    return false;
  }

  private static List<ContainerView> containers(JsonNode spec, String field)
      throws MalformedObjectException {
    String path = "Pod.spec." + field;
    JsonNode arr = array(spec, field, path);
    List<ContainerView> out = new ArrayList<>();
    for (int i = 0; arr != null && i < arr.size(); i++) {
      String cp = path + "[" + i + "]";
      JsonNode c = arr.get(i);
      requireObject(c, cp);
      String name = required(c, "name", cp + ".name", "");
      JsonNode res = object(c, "resources", cp + ".resources");
      out.add(
          new ContainerView(
              name,
              text(c, "image", cp + ".image"),
              map(res, "limits", cp + ".resources.limits", JsonViews::quantity),
              map(res, "requests", cp + ".resources.requests", JsonViews::quantity),
              Optional.of(text(c, "restartPolicy", cp + ".restartPolicy"))));
    }
    return out;
  }

  private static void requireObject(JsonNode n, String path) throws MalformedObjectException {
    if (n == null || !n.isObject()) {
      throw n == null
          ? new MalformedObjectException(path, "", "expected an object, got nothing", null)
          : wrongType(path, "an object", n);
    }
  }

  private static JsonNode object(JsonNode parent, String field, String path)
      throws MalformedObjectException {
    return container(parent, field, path, true);
  }

  private static JsonNode array(JsonNode parent, String field, String path)
      throws MalformedObjectException {
    return container(parent, field, path, false);
  }

  /** The object or array {@code field} of {@code parent}; null when absent or JSON null. */
  private static JsonNode container(JsonNode parent, String field, String path, boolean object)
      throws MalformedObjectException {
    JsonNode n = present(parent, field);
    if (n != null && (object ? !n.isObject() : !n.isArray())) {
      throw wrongType(path, object ? "an object" : "an array", n);
    }
    return n;
  }

  /** {@code parent.field}, null when the parent or the field is absent or JSON null. */
  private static JsonNode present(JsonNode parent, String field) {
    JsonNode n = parent == null ? null : parent.get(field);
    return n == null || n.isNull() ? null : n;
  }

  private static String text(JsonNode parent, String field, String path)
      throws MalformedObjectException {
    JsonNode n = present(parent, field);
    return n == null ? "" : string(n, path);
  }

  private static String string(JsonNode v, String at) throws MalformedObjectException {
    if (!v.isTextual()) {
      throw wrongType(at, "a string", v);
    }
    return v.textValue();
  }

  /** The non-empty string; absent, null or "" ⇒ "missing or empty" + context. */
  private static String required(JsonNode parent, String field, String path, String context)
      throws MalformedObjectException {
    String v = text(parent, field, path);
    if (v.isEmpty()) {
      throw new MalformedObjectException(path, "", "missing or empty" + context, null);
    }
    return v;
  }

  private interface EntryReader<V> {
    V read(JsonNode value, String at) throws MalformedObjectException;
  }

  /** An object's entries in order; absent or null object ⇒ empty, null entries absent. */
  private static <V> Map<String, V> map(
      JsonNode parent, String field, String path, EntryReader<V> reader)
      throws MalformedObjectException {
    JsonNode n = object(parent, field, path);
    Map<String, V> out = new LinkedHashMap<>();
    if (n == null) {
      return out;
    }
    for (Map.Entry<String, JsonNode> e : n.properties()) {
      if (!e.getValue().isNull()) {
        out.put(e.getKey(), reader.read(e.getValue(), path + "[\"" + e.getKey() + "\"]"));
      }
    }
    return out;
  }

  private static BigDecimal quantity(JsonNode v, String at) throws MalformedObjectException {
    String quantity;
    if (v.isTextual()) {
      quantity = v.textValue();
    } else if (v.isIntegralNumber()) {
      quantity = v.bigIntegerValue().toString();
    } else if (v.isBigDecimal()) {
      quantity = v.decimalValue().toString();
    } else if (v.isNumber() && Double.isFinite(v.doubleValue())) {
      quantity = Double.toString(v.doubleValue());
    } else {
      throw wrongType(at, "a quantity string", v);
    }
    try {
      return Quantities.parse(quantity);
    } catch (InvalidQuantityException ex) {
      throw new MalformedObjectException(at, abbreviate(v), ex.getMessage(), ex);
    }
  }

  private static MalformedObjectException wrongType(String path, String expected, JsonNode got) {
    return new MalformedObjectException(
        path, abbreviate(got), "expected " + expected + ", got " + got.getNodeType(), null);
  }

  /** The value as JSON text, cut to 200 characters (a huge value must not flood a log line). */
  private static String abbreviate(JsonNode n) {
    String s = n.toString();
    return s.length() <= 200 ? s : s.substring(0, 200) + "…(" + s.length() + " chars)";
  }
}
