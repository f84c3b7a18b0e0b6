package dev.hamilock.bind;

import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.PhaseRows;
import dev.hamilock.device.spi.fit.PodRequests;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.usage.NodeUsage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Whether an allocation (the Filter's) still fits the node's current usage: its shape matches the
 * pod's requests and each container's devices pass the vendor's own {@link DeviceVendor#fit} with
 * the same per-device amounts, on the rows {@link PhaseRows} gives them, as the fitter does.
 */
final class AllocationCheck {
  private AllocationCheck() {}

  /** {@return empty if the allocation fits, else why not} */
  static Optional<String> verify(
      VendorRegistry registry, PodRequests requests, NodeUsage usage, PodDevices allocation) {
    if (usage.status() != NodeUsage.Status.READY) {
      return Optional.of(usage.unavailableReason().orElse("node unavailable"));
    }
    List<Map<String, ContainerDeviceRequest>> per = requests.perContainer();
    Set<String> vendors = new HashSet<>();
    per.forEach(m -> vendors.addAll(m.keySet()));
    Optional<String> shape = shapeMismatch(allocation, per.size(), vendors);
    if (shape.isPresent()) {
      return shape;
    }
    PhaseRows phases =
        PhaseRows.start(requests.roles(), usage.devices().toArray(new DeviceUsage[0]));
    Map<Object, Object> memo = FitContext.newMemo();
    for (int ci = 0; ci < per.size(); ci++) {
      Map<String, ContainerDeviceRequest> reqs = per.get(ci);
      DeviceUsage[] work = phases.forContainer(ci);
      for (String v : vendors) {
        List<ContainerDevice> entry = allocation.forVendor(v).get(ci);
        ContainerDeviceRequest r = reqs.get(v);
        if (r == null) {
          if (!entry.isEmpty()) {
            return Optional.of(
                "container %d requests no %s device but the allocation gives it %d"
                    .formatted(ci, v, entry.size()));
          }
          continue;
        }
        if (entry.size() != r.nums()) {
          return Optional.of(
              "container %d requests %d %s device(s) but the allocation gives it %d"
                  .formatted(ci, r.nums(), v, entry.size()));
        }
        DeviceVendor vendor = registry.vendor(v).orElse(null);
        if (vendor == null) {
          return Optional.of("vendor " + v + " is not registered");
        }
        List<DeviceUsage> rows = new ArrayList<>(entry.size());
        Map<String, ContainerDevice> byUuid = new HashMap<>();
        Optional<String> unknown = collectRows(usage, work, vendor, v, ci, entry, rows, byUuid);
        if (unknown.isPresent()) {
          return unknown;
        }
        FitContext ctx = new FitContext(requests.pod(), usage.node(), requests.gpuPolicy(), memo);
        Optional<String> changed = fitMismatch(ci, vendor.fit(rows, r, ctx), entry.size(), byUuid);
        if (changed.isPresent()) {
          return changed;
        }
        for (ContainerDevice cd : entry) {
          int p = usage.positionOf(cd.uuid());
          work[p] = work[p].withAllocation(cd);
        }
      }
    }
    return Optional.empty();
  }

  /** Every allocated vendor is requested, and each has one entry per container. */
  private static Optional<String> shapeMismatch(
      PodDevices allocation, int containers, Set<String> vendors) {
    for (String v : allocation.byVendor().keySet()) {
      if (!vendors.contains(v)) {
        return Optional.of("allocation names vendor " + v + " the pod does not request");
      }
    }
    for (String v : vendors) {
      int n = allocation.forVendor(v).size();
      if (n != containers) {
        return Optional.of(
            "allocation of %s has %d container entries, the pod has %d containers"
                .formatted(v, n, containers));
      }
    }
    return Optional.empty();
  }

  /** Adds each device's row to {@code rows}, indexed by UUID; else why the entry is invalid. */
  private static Optional<String> collectRows(
      NodeUsage usage,
      DeviceUsage[] work,
      DeviceVendor vendor,
      String v,
      int ci,
      List<ContainerDevice> entry,
      List<DeviceUsage> rows,
      Map<String, ContainerDevice> byUuid) {
    for (ContainerDevice cd : entry) {
      int p = usage.positionOf(cd.uuid());
      if (p < 0 || !work[p].vendor().equals(v) || !vendor.ownsDeviceType(work[p].type())) {
        return Optional.of(
            "device %s is not a registered %s device of node %s"
                .formatted(cd.uuid(), v, usage.name()));
      }
      if (byUuid.put(cd.uuid(), cd) != null) {
        return Optional.of("device " + cd.uuid() + " appears twice in container " + ci);
      }
      rows.add(work[p]);
    }
    return Optional.empty();
  }

  /** Why the vendor's fit {@code f} differs from the given devices or amounts, if it does. */
  private static Optional<String> fitMismatch(
      int ci, ContainerFit f, int given, Map<String, ContainerDevice> byUuid) {
    if (!f.fits()) {
      return Optional.of("container " + ci + ": " + f.reason());
    }
    if (f.devices().size() != given) {
      return Optional.of(
          "container " + ci + ": the vendor now chooses " + f.devices().size() + " device(s)");
    }
    for (ContainerDevice d : f.devices()) {
      ContainerDevice was = byUuid.get(d.uuid());
      if (was == null || was.usedmem() != d.usedmem() || was.usedcores() != d.usedcores()) {
        String before = was == null ? "nothing" : was.usedmem() + " MiB / " + was.usedcores() + "%";
        return Optional.of(
            "container %d: device %s would now be given %d MiB / %d%% instead of %s"
                .formatted(ci, d.uuid(), d.usedmem(), d.usedcores(), before));
      }
    }
    return Optional.empty();
  }
}
