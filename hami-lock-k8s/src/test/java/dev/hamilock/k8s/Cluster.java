package dev.hamilock.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.WriteRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/** Test helpers over one backend (the emulator or the real API server). */
final class Cluster {
  static final String KEY = "hami.io/mutex.lock";
  private static final AtomicInteger NAMES = new AtomicInteger();

  final KubeBackend k8s;

  Cluster(KubeBackend k8s) {
    this.k8s = k8s;
  }

  /**
   * @return a fresh unique name with the prefix
   */
  static String unique(String prefix) {
    return prefix + "-" + NAMES.incrementAndGet();
  }

  /** Creates a node with an annotations map (as kubelet nodes have), returns its name. */
  String node(String name) {
    k8s.createNode(name, Map.of("node.alpha.kubernetes.io/ttl", "0"));
    return name;
  }

  /** Creates a node without any annotations map. */
  String bareNode(String name) {
    k8s.createNode(name, Map.of());
    return name;
  }

  void namespace(String ns) {
    if (k8s.get("namespaces", null, ns).isEmpty()) {
      k8s.createNamespace(ns);
    }
  }

  /** Creates a pod with the given phase (namespace created when missing). */
  JsonNode pod(String ns, String name, String phase) {
    namespace(ns);
    Optional<JsonNode> existing = k8s.get("pods", ns, name);
    if (existing.isPresent()
        && existing.get().path("status").path("phase").asText().equals(phase)) {
      return existing.get();
    }
    if (existing.isPresent()) {
      k8s.delete("pods", ns, name);
    }
    return k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Pod",
            "metadata",
            Map.of("name", name, "namespace", ns),
            "spec",
            Map.of("containers", List.of(Map.of("name", "main", "image", "busybox"))),
            "status",
            Map.of("phase", phase)));
  }

  /** Creates a Running pod held by a finalizer and deletes it: it is then terminating. */
  void terminatingPod(String ns, String name) {
    namespace(ns);
    k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Pod",
            "metadata",
            Map.of("name", name, "namespace", ns, "finalizers", List.of("example.com/hold")),
            "spec",
            Map.of("containers", List.of(Map.of("name", "main", "image", "busybox"))),
            "status",
            Map.of("phase", "Running")));
    k8s.delete("pods", ns, name);
  }

  Optional<String> lock(String node) {
    return k8s.get("nodes", null, node)
        .map(n -> n.path("metadata").path("annotations").path(KEY))
        .filter(v -> !v.isMissingNode() && !v.isNull())
        .map(JsonNode::asText);
  }

  /** Sets (or with null removes) the lock annotation directly, as another writer would. */
  void setLock(String node, String value) {
    k8s.mutate(
        "nodes",
        null,
        node,
        o -> {
          ObjectNode meta = (ObjectNode) o.get("metadata");
          ObjectNode ann =
              meta.has("annotations")
                  ? (ObjectNode) meta.get("annotations")
                  : meta.putObject("annotations");
          if (value == null) {
            ann.remove(KEY);
          } else {
            ann.put(KEY, value);
          }
          return o;
        });
  }

  /** Lock values after each committed write of the node (absent = empty), oldest first. */
  List<Optional<String>> lockHistory(String node) {
    List<Optional<String>> out = new ArrayList<>();
    if (!(k8s instanceof ApiServerEmulator emulator)) {
      throw new UnsupportedOperationException(
          "write history is an emulator feature; on "
              + k8s.kind().label()
              + " rebuild it from a watch");
    }
    for (WriteRecord r : emulator.history("nodes", null, node)) {
      out.add(Optional.ofNullable(r.annotations().get(KEY)));
    }
    return out;
  }

  /** Node and pod reads and writes (the lock's requests; watch and list excluded). */
  long lockRequests() {
    return k8s.requestCount("patch", "nodes")
        + k8s.requestCount("get", "nodes")
        + k8s.requestCount("get", "pods");
  }

  long patches() {
    return k8s.requestCount("patch", "nodes");
  }
}
