package dev.hamilock.testkit;

import static dev.hamilock.testkit.Checks.requireNonBlank;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A node to seed into an {@link ApiServerEmulator} ({@link
 * ApiServerEmulator#createNode(TestNode)}): labels, annotations (e.g. a HAMi device registration),
 * capacity and allocatable resources, the Ready condition and {@code spec.unschedulable}.
 * Quantities are Kubernetes quantity strings, stored as given. The node is Ready unless {@link
 * #ready(boolean) ready(false)}. Not thread-safe; {@link #toJson()} can be called repeatedly.
 */
public final class TestNode {
  private final String name;
  private final Map<String, String> labels = new LinkedHashMap<>();
  private final Map<String, String> annotations = new LinkedHashMap<>();
  private final Map<String, String> capacity = new LinkedHashMap<>();
  private final Map<String, String> allocatable = new LinkedHashMap<>();
  private boolean ready = true;
  private boolean unschedulable;

  private TestNode(String name) {
    this.name = requireNonBlank(name, "name");
  }

  /**
   * @return a Ready, schedulable node without labels, annotations or resources
   * @throws NullPointerException if the name is null
   * @throws IllegalArgumentException if the name is blank
   */
  public static TestNode named(String name) {
    return new TestNode(name);
  }

  public TestNode label(String key, String value) {
    labels.put(requireNonBlank(key, "label key"), Objects.requireNonNull(value, "label value"));
    return this;
  }

  public TestNode labels(Map<String, String> labels) {
    labels.forEach(this::label);
    return this;
  }

  /**
   * @param key annotation key, e.g. {@code hami.io/node-nvidia-register}
   * @param value annotation value, stored byte for byte
   */
  public TestNode annotation(String key, String value) {
    annotations.put(
        requireNonBlank(key, "annotation key"), Objects.requireNonNull(value, "annotation value"));
    return this;
  }

  public TestNode annotations(Map<String, String> annotations) {
    annotations.forEach(this::annotation);
    return this;
  }

  /**
   * Sets a resource's capacity and allocatable to the same quantity.
   *
   * @param resource resource name, e.g. {@code nvidia.com/gpu}
   * @param quantity quantity, e.g. {@code "10"}
   */
  public TestNode resource(String resource, String quantity) {
    return capacity(resource, quantity).allocatable(resource, quantity);
  }

  /**
   * @param quantity {@code status.capacity} quantity
   */
  public TestNode capacity(String resource, String quantity) {
    capacity.put(requireNonBlank(resource, "resource"), requireNonBlank(quantity, "quantity"));
    return this;
  }

  /**
   * @param quantity {@code status.allocatable} quantity
   */
  public TestNode allocatable(String resource, String quantity) {
    allocatable.put(requireNonBlank(resource, "resource"), requireNonBlank(quantity, "quantity"));
    return this;
  }

  /**
   * @param ready the {@code Ready} condition's status ({@code True}/{@code False}; default true)
   */
  public TestNode ready(boolean ready) {
    this.ready = ready;
    return this;
  }

  /**
   * @param unschedulable {@code spec.unschedulable} (cordoned; default false)
   */
  public TestNode unschedulable(boolean unschedulable) {
    this.unschedulable = unschedulable;
    return this;
  }

  public String name() {
    return name;
  }

  /**
   * @return the node as a {@code v1/Node} JSON object (a new tree on every call)
   */
  public ObjectNode toJson() {
    ObjectNode node = Store.JSON.objectNode();
    node.put("apiVersion", "v1");
    node.put("kind", "Node");
    ObjectNode meta = node.putObject("metadata");
    meta.put("name", name);
    if (!labels.isEmpty()) {
      labels.forEach(meta.putObject("labels")::put);
    }
    if (!annotations.isEmpty()) {
      annotations.forEach(meta.putObject("annotations")::put);
    }
    if (unschedulable) {
      node.putObject("spec").put("unschedulable", true);
    }
    ObjectNode status = node.putObject("status");
    if (!capacity.isEmpty()) {
      capacity.forEach(status.putObject("capacity")::put);
    }
    if (!allocatable.isEmpty()) {
      allocatable.forEach(status.putObject("allocatable")::put);
    }
    ObjectNode c = status.putArray("conditions").addObject();
    c.put("type", "Ready");
    c.put("status", ready ? "True" : "False");
    return node;
  }

  @Override
  public String toString() {
    return "TestNode[" + name + "]";
  }
}
