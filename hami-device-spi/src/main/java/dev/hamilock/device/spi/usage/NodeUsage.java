package dev.hamilock.device.spi.usage;

import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.NodeView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Immutable device usage of one node (HAMi getNodesUsage row set, spec §2.4): one {@link
 * DeviceUsage} per registered device of every vendor, plus the node itself and a status.
 * Thread-safe.
 */
public final class NodeUsage {
  private static final Logger LOG = LoggerFactory.getLogger(NodeUsage.class);

  public enum Status {
    /** Registered devices and known usage. */
    READY,
    /** No vendor registered a device on the node: HAMi's {@code node unregistered}. */
    UNREGISTERED,
    /** Some pod's allocation on the node could not be decoded: fail closed. */
    USAGE_UNKNOWN
  }

  private final NodeView node;
  private final Status status;
  private final String reason;
  private final List<DeviceUsage> devices;
  private final Map<String, String> registrationErrors;
  private final Map<String, int[]> vendorPositions;
  private final Map<String, Integer> positionById;
  private final double baseScore;

  private NodeUsage(
      NodeView node,
      Status status,
      String reason,
      List<DeviceUsage> devices,
      Map<String, String> registrationErrors) {
    this.node = Objects.requireNonNull(node, "node");
    this.status = status;
    this.reason = reason;
    this.devices = List.copyOf(devices);
    this.registrationErrors = Map.copyOf(registrationErrors);
    Map<String, List<Integer>> pos = new HashMap<>();
    Map<String, Integer> byId = new HashMap<>();
    for (int i = 0; i < this.devices.size(); i++) {
      DeviceUsage d = this.devices.get(i);
      pos.computeIfAbsent(d.vendor(), k -> new ArrayList<>()).add(i);
      byId.putIfAbsent(d.id(), i);
    }
    Map<String, int[]> vp = new HashMap<>();
    pos.forEach((k, v) -> vp.put(k, v.stream().mapToInt(Integer::intValue).toArray()));
    this.vendorPositions = Collections.unmodifiableMap(vp);
    this.positionById = Collections.unmodifiableMap(byId);
    this.baseScore = computeBaseScore(this.devices);
  }

  /** A node with known usage rows, in registration order; UNREGISTERED when there are none. */
  public static NodeUsage of(NodeView node, List<DeviceUsage> devices) {
    return of(node, devices, Map.of());
  }

  /** As {@link #of(NodeView, List)}, with each vendor CommonWord's registration decode error. */
  public static NodeUsage of(
      NodeView node, List<DeviceUsage> devices, Map<String, String> registrationErrors) {
    if (devices.isEmpty()) {
      String why =
          registrationErrors.isEmpty()
              ? "node unregistered"
              : "node unregistered: " + new TreeMap<>(registrationErrors);
      return new NodeUsage(node, Status.UNREGISTERED, why, List.of(), registrationErrors);
    }
    return new NodeUsage(node, Status.READY, "", devices, registrationErrors);
  }

  /**
   * A node whose usage is unknown (fail closed): every fit on it fails with {@code reason}, which
   * names the offending pod(s) and annotation; {@code devices} are the rows as far as known.
   */
  public static NodeUsage unknown(NodeView node, List<DeviceUsage> devices, String reason) {
    return new NodeUsage(node, Status.USAGE_UNKNOWN, reason, devices, Map.of());
  }

  public NodeView node() {
    return node;
  }

  public String name() {
    return node.name();
  }

  public Status status() {
    return status;
  }

  /** Why the node cannot be fitted (UNREGISTERED, USAGE_UNKNOWN), empty when READY. */
  public Optional<String> unavailableReason() {
    return status == Status.READY ? Optional.empty() : Optional.of(reason);
  }

  /** All rows, in registration order. */
  public List<DeviceUsage> devices() {
    return devices;
  }

  /** Vendor CommonWord to registration decode error (such vendors have no rows). */
  public Map<String, String> registrationErrors() {
    return registrationErrors;
  }

  /** Positions in {@link #devices()} of a vendor's rows (do not modify the array). */
  public int[] positionsOf(String vendor) {
    int[] p = vendorPositions.get(vendor);
    return p == null ? EMPTY : p;
  }

  private static final int[] EMPTY = new int[0];

  /** A device UUID's position in {@link #devices()}, or -1. */
  public int positionOf(String deviceId) {
    Integer p = positionById.get(deviceId);
    return p == null ? -1 : p;
  }

  /**
   * HAMi node base score (§5.9) on this usage: {@code 10 × (Σused/Σcount + Σusedcores/Σtotalcore +
   * Σusedmem/Σtotalmem)}, 0 if any denominator is 0.
   */
  public double baseScore() {
    return baseScore;
  }

  private static double computeBaseScore(List<DeviceUsage> ds) {
    long used = 0, count = 0, ucores = 0, tcores = 0, umem = 0, tmem = 0;
    for (DeviceUsage d : ds) {
      used += d.used();
      count += d.count();
      ucores += d.usedcores();
      tcores += d.totalcore();
      umem += d.usedmem();
      tmem += d.totalmem();
    }
    if (count == 0 || tcores == 0 || tmem == 0) {
      return 0;
    }
    return 10 * ((double) used / count + (double) ucores / tcores + (double) umem / tmem);
  }

  /**
   * Adds one pod's collapsed usage to the rows of the same UUIDs ({@link
   * DeviceUsage#withAllocation}; unknown UUIDs are stale and ignored, as HAMi). An undecodable pod
   * makes the node USAGE_UNKNOWN ({@code node usage unknown: pod <key> <error>}, further pods
   * appended with {@code ;}). The pod's node name is not checked.
   */
  public NodeUsage plus(PodUsage pod) {
    if (status == Status.UNREGISTERED) {
      return this;
    }
    if (pod.decodeError().isPresent()) {
      String why = "pod " + pod.podKey() + " " + pod.decodeError().get();
      return unknown(
          node,
          devices,
          status == Status.USAGE_UNKNOWN ? reason + "; " + why : "node usage unknown: " + why);
    }
    if (pod.devices().isEmpty()) {
      return this;
    }
    List<DeviceUsage> rows = new ArrayList<>(devices);
    for (ContainerDevice cd : pod.devices()) {
      int p = positionOf(cd.uuid());
      if (p < 0) {
        LOG.debug(
            "pod {} on node {} uses unknown device {} (stale); ignored",
            pod.podKey(),
            node.name(),
            cd.uuid());
        continue;
      }
      rows.set(p, rows.get(p).withAllocation(cd));
    }
    return status == Status.USAGE_UNKNOWN
        ? unknown(node, rows, reason)
        : new NodeUsage(node, Status.READY, "", rows, registrationErrors);
  }

  @Override
  public String toString() {
    return "NodeUsage[" + node.name() + ", " + status + ", " + devices + "]";
  }
}
