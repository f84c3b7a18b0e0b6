package dev.hamilock.testkit;

import static dev.hamilock.testkit.Checks.checkArgument;
import static dev.hamilock.testkit.Checks.requireNonBlank;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A pod to seed into an {@link ApiServerEmulator} ({@link ApiServerEmulator#createPod(TestPod)}):
 * labels, annotations, containers with resource requests and limits, scheduler name, node name and
 * phase.
 *
 * <p>{@link #limit} and {@link #request} apply to the container added last; without {@link
 * #container} the pod has one container {@code main} (image {@code busybox}). Quantities are
 * Kubernetes quantity strings ({@code "1"}, {@code "500m"}, {@code "16Gi"}), stored as given. The
 * default phase is {@code Pending} with no node; {@link #nodeName} makes the pod bound ({@code
 * spec.nodeName}). Not thread-safe; {@link #toJson()} can be called repeatedly.
 */
public final class TestPod {
  private final String namespace;
  private final String name;
  private final Map<String, String> labels = new LinkedHashMap<>();
  private final Map<String, String> annotations = new LinkedHashMap<>();
  private final List<Container> containers = new ArrayList<>();
  private final List<Container> initContainers = new ArrayList<>();
  private Container last;
  private String schedulerName;
  private String nodeName;
  private String phase = "Pending";

  private record Container(
      String name,
      String image,
      Map<String, String> requests,
      Map<String, String> limits,
      String restartPolicy) {}

  private TestPod(String namespace, String name) {
    this.namespace = requireNonBlank(namespace, "namespace");
    this.name = requireNonBlank(name, "name");
  }

  /**
   * @param namespace the pod's namespace; it must exist when the pod is created ({@code default}
   *     always does)
   * @return a Pending pod without labels, annotations or node
   * @throws NullPointerException if either is null
   * @throws IllegalArgumentException if either is blank
   */
  public static TestPod named(String namespace, String name) {
    return new TestPod(namespace, name);
  }

  /**
   * @param key label key, e.g. {@code scheduling.x-k8s.io/pod-group}
   */
  public TestPod label(String key, String value) {
    labels.put(requireNonBlank(key, "label key"), Objects.requireNonNull(value, "label value"));
    return this;
  }

  public TestPod labels(Map<String, String> labels) {
    labels.forEach(this::label);
    return this;
  }

  /**
   * @param key annotation key, e.g. {@code hami.io/vgpu-devices-to-allocate}
   */
  public TestPod annotation(String key, String value) {
    annotations.put(
        requireNonBlank(key, "annotation key"), Objects.requireNonNull(value, "annotation value"));
    return this;
  }

  public TestPod annotations(Map<String, String> annotations) {
    annotations.forEach(this::annotation);
    return this;
  }

  /** Adds a container; following {@link #limit}/{@link #request} calls apply to it. */
  public TestPod container(String name, String image) {
    last =
        new Container(
            requireNonBlank(name, "container name"),
            requireNonBlank(image, "image"),
            new LinkedHashMap<>(),
            new LinkedHashMap<>(),
            null);
    containers.add(last);
    return this;
  }

  /** Adds an init container; following {@link #limit}/{@link #request} calls apply to it. */
  public TestPod initContainer(String name, String image) {
    return addInit(name, image, null);
  }

  /**
   * Adds a native sidecar: an init container with {@code restartPolicy: Always} (Kubernetes &ge;
   * 1.29), at this position among the init containers; following {@link #limit}/{@link #request}
   * calls apply to it.
   */
  public TestPod sidecarContainer(String name, String image) {
    return addInit(name, image, "Always");
  }

  private TestPod addInit(String name, String image, String restartPolicy) {
    last =
        new Container(
            requireNonBlank(name, "container name"),
            requireNonBlank(image, "image"),
            new LinkedHashMap<>(),
            new LinkedHashMap<>(),
            restartPolicy);
    initContainers.add(last);
    return this;
  }

  /**
   * @param resource resource name, e.g. {@code nvidia.com/gpumem}
   * @param quantity quantity, e.g. {@code "3000"} (HAMi reads gpumem in MiB)
   */
  public TestPod limit(String resource, String quantity) {
    current()
        .limits
        .put(requireNonBlank(resource, "resource"), requireNonBlank(quantity, "quantity"));
    return this;
  }

  /**
   * @param resource resource name, e.g. {@code cpu}
   * @param quantity quantity, e.g. {@code "500m"}
   */
  public TestPod request(String resource, String quantity) {
    current()
        .requests
        .put(requireNonBlank(resource, "resource"), requireNonBlank(quantity, "quantity"));
    return this;
  }

  /**
   * @param schedulerName {@code spec.schedulerName}, e.g. {@code hami-scheduler} (default unset)
   */
  public TestPod schedulerName(String schedulerName) {
    this.schedulerName = requireNonBlank(schedulerName, "schedulerName");
    return this;
  }

  /**
   * @param nodeName {@code spec.nodeName}: the pod is bound to that node (default unbound)
   */
  public TestPod nodeName(String nodeName) {
    this.nodeName = requireNonBlank(nodeName, "nodeName");
    return this;
  }

  /**
   * @param phase {@code status.phase}: {@code Pending} (default), {@code Running}, {@code
   *     Succeeded}, {@code Failed} or {@code Unknown}
   * @throws IllegalArgumentException for another value, naming it
   */
  public TestPod phase(String phase) {
    checkArgument(
        List.of("Pending", "Running", "Succeeded", "Failed", "Unknown").contains(phase),
        "phase must be Pending, Running, Succeeded, Failed or Unknown: \"%s\"",
        phase);
    this.phase = phase;
    return this;
  }

  public String namespace() {
    return namespace;
  }

  public String name() {
    return name;
  }

  /**
   * @return the pod as a {@code v1/Pod} JSON object (a new tree on every call)
   */
  public ObjectNode toJson() {
    ObjectNode pod = Store.JSON.objectNode();
    pod.put("apiVersion", "v1");
    pod.put("kind", "Pod");
    ObjectNode meta = pod.putObject("metadata");
    meta.put("name", name);
    meta.put("namespace", namespace);
    if (!labels.isEmpty()) {
      labels.forEach(meta.putObject("labels")::put);
    }
    if (!annotations.isEmpty()) {
      annotations.forEach(meta.putObject("annotations")::put);
    }
    ObjectNode spec = pod.putObject("spec");
    if (schedulerName != null) {
      spec.put("schedulerName", schedulerName);
    }
    if (nodeName != null) {
      spec.put("nodeName", nodeName);
    }
    if (!initContainers.isEmpty()) {
      write(spec.putArray("initContainers"), initContainers);
    }
    write(
        spec.putArray("containers"),
        containers.isEmpty()
            ? List.of(new Container("main", "busybox", Map.of(), Map.of(), null))
            : containers);
    pod.putObject("status").put("phase", phase);
    return pod;
  }

  private static void write(ArrayNode out, List<Container> in) {
    for (Container c : in) {
      ObjectNode o = out.addObject();
      o.put("name", c.name);
      o.put("image", c.image);
      if (c.restartPolicy != null) {
        o.put("restartPolicy", c.restartPolicy);
      }
      if (!c.requests.isEmpty() || !c.limits.isEmpty()) {
        ObjectNode r = o.putObject("resources");
        if (!c.limits.isEmpty()) {
          c.limits.forEach(r.putObject("limits")::put);
        }
        if (!c.requests.isEmpty()) {
          c.requests.forEach(r.putObject("requests")::put);
        }
      }
    }
  }

  private Container current() {
    if (last == null) {
      container("main", "busybox");
    }
    return last;
  }

  @Override
  public String toString() {
    return "TestPod[" + namespace + "/" + name + "]";
  }
}
