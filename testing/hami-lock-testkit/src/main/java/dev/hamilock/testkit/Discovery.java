package dev.hamilock.testkit;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * Non-aggregated discovery documents ({@code /api}, {@code /api/v1}, {@code /apis}, {@code
 * /apis/<group>}, {@code /apis/<group>/<version>}) and {@code /version}, in the shapes of {@code
 * k8s.io/apimachinery/pkg/apis/meta/v1} APIVersions, APIGroupList, APIGroup and APIResourceList.
 * kubectl falls back to these when the aggregated form ({@code
 * application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList}) is not offered.
 */
final class Discovery {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  static final String SCHEDULING_GROUP = "scheduling.x-k8s.io";
  static final String SCHEDULING_VERSION = "v1alpha1";

  /** The Kubernetes version the emulator claims (client-java 27 is built from release-1.36). */
  static final String GIT_VERSION = "v1.36.0";

  private Discovery() {}

  static ObjectNode apiVersions(String serverAddress) {
    ObjectNode o = JSON.objectNode();
    o.put("kind", "APIVersions");
    o.putArray("versions").add("v1");
    ObjectNode cidr = o.putArray("serverAddressByClientCIDRs").addObject();
    cidr.put("clientCIDR", "0.0.0.0/0");
    cidr.put("serverAddress", serverAddress);
    return o;
  }

  private static ObjectNode group(String name, String version) {
    ObjectNode g = JSON.objectNode();
    g.put("name", name);
    ObjectNode v = g.putArray("versions").addObject();
    v.put("groupVersion", name + "/" + version);
    v.put("version", version);
    ObjectNode p = g.putObject("preferredVersion");
    p.put("groupVersion", name + "/" + version);
    p.put("version", version);
    return g;
  }

  static ObjectNode apiGroupList(boolean withDra) {
    ObjectNode o = JSON.objectNode();
    o.put("kind", "APIGroupList");
    o.put("apiVersion", "v1");
    ArrayNode groups = o.putArray("groups").add(group(SCHEDULING_GROUP, SCHEDULING_VERSION));
    if (withDra) {
      groups.add(group(ResourceType.DRA_GROUP, "v1"));
    }
    return o;
  }

  static ObjectNode apiGroup(String name) {
    ObjectNode g = group(name, name.equals(SCHEDULING_GROUP) ? SCHEDULING_VERSION : "v1");
    ObjectNode o = JSON.objectNode();
    o.put("kind", "APIGroup");
    o.put("apiVersion", "v1");
    o.setAll(g);
    return o;
  }

  private static ObjectNode resource(
      String name,
      String singular,
      boolean namespaced,
      String group,
      String version,
      String kind,
      List<String> verbs,
      List<String> shortNames) {
    ObjectNode r = JSON.objectNode();
    r.put("name", name);
    r.put("singularName", singular);
    r.put("namespaced", namespaced);
    if (group != null) {
      r.put("group", group);
      r.put("version", version);
    }
    r.put("kind", kind);
    ArrayNode v = r.putArray("verbs");
    verbs.forEach(v::add);
    if (!shortNames.isEmpty()) {
      ArrayNode s = r.putArray("shortNames");
      shortNames.forEach(s::add);
    }
    return r;
  }

  private static final List<String> ALL_VERBS =
      List.of("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch");
  private static final List<String> STATUS_VERBS = List.of("get", "patch", "update");

  static ObjectNode resourceList(String groupVersion) {
    ObjectNode o = JSON.objectNode();
    o.put("kind", "APIResourceList");
    o.put("apiVersion", "v1");
    o.put("groupVersion", groupVersion);
    ArrayNode rs = o.putArray("resources");
    for (ResourceType t : ResourceType.ALL) {
      if (!t.apiVersion().equals(groupVersion)) {
        continue;
      }
      List<String> verbs =
          t == ResourceType.NAMESPACES
              ? List.of("create", "delete", "get", "list", "patch", "update", "watch")
              : ALL_VERBS;
      rs.add(
          resource(
              t.plural(),
              t.singular(),
              t.namespaced(),
              null,
              null,
              t.kind(),
              verbs,
              t.shortNames()));
      if (t == ResourceType.PODS) {
        rs.add(
            resource(
                "pods/binding", "", true, null, null, "Binding", List.of("create"), List.of()));
      }
      if (t.hasStatus()) {
        rs.add(
            resource(
                t.plural() + "/status",
                "",
                t.namespaced(),
                null,
                null,
                t.kind(),
                STATUS_VERBS,
                List.of()));
      }
    }
    return o;
  }

  static ObjectNode version() {
    ObjectNode o = JSON.objectNode();
    o.put("major", "1");
    o.put("minor", "36");
    o.put("gitVersion", GIT_VERSION);
    o.put("gitCommit", "0000000000000000000000000000000000000000");
    o.put("gitTreeState", "clean");
    o.put("buildDate", "2026-01-01T00:00:00Z");
    o.put("goVersion", "go1.25.0");
    o.put("compiler", "gc");
    o.put("platform", "linux/amd64");
    return o;
  }
}
