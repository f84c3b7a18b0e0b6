package dev.hamilock.device.nvidia;

import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.GpuPolicy;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.InvalidQuantityException;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Map;

/** Test helpers. */
final class Nv {
  static final NvidiaVendor V = new NvidiaVendor();

  private Nv() {}

  static DeviceUsage dev(
      String id,
      int index,
      int numa,
      int count,
      int used,
      int totalmem,
      int usedmem,
      int totalcore,
      int usedcores) {
    return new DeviceUsage(
        id,
        index,
        "NVIDIA",
        "NVIDIA",
        numa,
        "hami-core",
        true,
        count,
        used,
        totalmem,
        usedmem,
        totalcore,
        usedcores,
        List.of(),
        false);
  }

  /** Count 100, totalcore 100, type NVIDIA, empty. */
  static DeviceUsage card(String id, int index, int totalmem) {
    return dev(id, index, 0, 100, 0, totalmem, 0, 100, 0);
  }

  static ContainerDeviceRequest req(int nums, int mem, int pct, int cores) {
    return new ContainerDeviceRequest(nums, "NVIDIA", mem, pct, cores);
  }

  static ContainerFit fit(
      List<DeviceUsage> devices,
      ContainerDeviceRequest r,
      Map<String, String> podAnnotations,
      Map<String, String> nodeAnnotations,
      String policy) {
    PodView pod = PodView.builder("default", "p").annotations(podAnnotations).build();
    return V.fit(
        devices,
        r,
        new FitContext(
            pod,
            NodeView.of("node", nodeAnnotations),
            GpuPolicy.parse(policy),
            FitContext.newMemo()));
  }

  static ContainerFit fit(List<DeviceUsage> devices, ContainerDeviceRequest r) {
    return fit(devices, r, Map.of(), Map.of(), "spread");
  }

  static ContainerView container(
      String name, Map<String, String> limits, Map<String, String> requests) {
    try {
      return ContainerView.ofQuantities(name, "img", limits, requests);
    } catch (InvalidQuantityException e) {
      throw new AssertionError(e);
    }
  }
}
