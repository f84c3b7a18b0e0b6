package dev.hamilock.k8s.bind;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.JsonViews;
import dev.hamilock.device.spi.view.MalformedObjectException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Views ⇄ backend JSON for seeding and inspection (the emulator: no HTTP; the real server: its
 * seeding client).
 */
final class EmulatorObjects {
  private EmulatorObjects() {}

  static void namespace(KubeBackend k8s, String ns) {
    if (k8s.get("namespaces", null, ns).isEmpty()) {
      k8s.createNamespace(ns);
    }
  }

  static JsonNode createNode(KubeBackend k8s, NodeView node) {
    Map<String, Object> meta = new LinkedHashMap<>();
    meta.put("name", node.name());
    meta.put("labels", node.labels());
    meta.put("annotations", node.annotations());
    Map<String, String> allocatable = new LinkedHashMap<>();
    node.allocatable().forEach((k, v) -> allocatable.put(k, v.toPlainString()));
    return k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Node",
            "metadata",
            meta,
            "status",
            Map.of("allocatable", allocatable)));
  }

  static JsonNode createPod(ApiServerEmulator k8s, PodView pod) {
    namespace(k8s, pod.namespace());
    return createPod(k8s, pod, pod.namespace());
  }

  /** Creates the pod in {@code namespace} (which must exist) instead of the view's. */
  static JsonNode createPod(KubeBackend k8s, PodView pod, String namespace) {
    Map<String, Object> meta = new LinkedHashMap<>();
    meta.put("name", pod.name());
    meta.put("namespace", namespace);
    meta.put("labels", pod.labels());
    meta.put("annotations", pod.annotations());
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("schedulerName", "hami-scheduler");
    if (!pod.initContainers().isEmpty()) {
      spec.put("initContainers", containers(pod.initContainers()));
    }
    spec.put("containers", containers(pod.containers()));
    return k8s.create(
        Map.of(
            "apiVersion",
            "v1",
            "kind",
            "Pod",
            "metadata",
            meta,
            "spec",
            spec,
            "status",
            Map.of("phase", "Pending")));
  }

  private static List<Object> containers(List<ContainerView> in) {
    List<Object> out = new ArrayList<>();
    for (ContainerView c : in) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", c.name());
      m.put("image", c.image().isEmpty() ? "cuda" : c.image());
      m.put("resources", Map.of("limits", text(c.limits()), "requests", text(c.requests())));
      c.restartPolicy().ifPresent(r -> m.put("restartPolicy", r));
      out.add(m);
    }
    return out;
  }

  private static Map<String, String> text(Map<String, BigDecimal> q) {
    Map<String, String> out = new LinkedHashMap<>();
    q.forEach((k, v) -> out.put(k, v.toPlainString()));
    return out;
  }

  static ClusterPod pod(JsonNode n) {
    try {
      PodView view = JsonViews.podView(n);
      return new ClusterPod(
          view, view.nodeName(), n.path("metadata").path("resourceVersion").asText(""));
    } catch (MalformedObjectException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * @return the pod's view as stored now (the scheduler's informer copy in a real scheduler)
   */
  static dev.hamilock.device.spi.view.PodView readPod(KubeBackend k8s, String ns, String name) {
    return pod(k8s.get("pods", ns, name)
            .orElseThrow(() -> new AssertionError("no pod " + ns + "/" + name)))
        .view();
  }

  static NodeView node(JsonNode n) {
    try {
      return JsonViews.nodeView(n);
    } catch (MalformedObjectException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * @return the pod's annotations as stored, or an empty map if it has none or is gone
   */
  static Map<String, String> annotations(ApiServerEmulator k8s, String ns, String name) {
    return k8s.get("pods", ns, name).map(n -> pod(n).view().annotations()).orElse(Map.of());
  }

  static Map<String, String> labels(ApiServerEmulator k8s, String ns, String name) {
    return k8s.get("pods", ns, name).map(n -> pod(n).view().labels()).orElse(Map.of());
  }

  /**
   * @return the node's lock annotation value, or null
   */
  static String lock(ApiServerEmulator k8s, String node) {
    return k8s.get("nodes", null, node)
        .map(n -> node(n).annotations().get("hami.io/mutex.lock"))
        .orElse(null);
  }
}
