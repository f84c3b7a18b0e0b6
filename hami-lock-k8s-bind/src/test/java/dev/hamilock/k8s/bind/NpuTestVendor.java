package dev.hamilock.k8s.bind;

import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;

/**
 * TEST-ONLY second vendor served by its own device plugin, with its own node lock (as Cambricon's
 * {@code cambricon.com/dsmlu.lock} or a third-party vendor's): {@value #COUNT} asks for whole
 * devices, the node's {@value #REGISTRATION} annotation names its one device.
 */
final class NpuTestVendor implements DeviceVendor {
  static final String WORD = "NPUX";
  static final String COUNT = "example.com/npu";
  static final String LOCK = "example.com/npu.lock";
  static final String REGISTRATION = "example.com/node-npu-register";

  @Override
  public String commonWord() {
    return WORD;
  }

  @Override
  public VendorConfig defaultConfig() {
    return VendorConfig.of(COUNT, null);
  }

  @Override
  public Optional<String> nodeLockKey() {
    return Optional.of(LOCK);
  }

  @Override
  public String registrationAnnotationKey() {
    return REGISTRATION;
  }

  @Override
  public String toAllocateAnnotationKey() {
    return "example.com/npu-devices-to-allocate";
  }

  @Override
  public String allocatedAnnotationKey() {
    return "example.com/npu-devices-allocated";
  }

  @Override
  public Optional<ContainerDeviceRequest> parseRequest(ContainerView c, VendorConfig config) {
    return c.limitOrRequest(COUNT)
        .filter(n -> n.signum() > 0)
        .map(BigDecimal::intValue)
        .map(n -> new ContainerDeviceRequest(n, WORD, 0, 100, 0));
  }

  @Override
  public List<DeviceInfo> decodeNodeDevices(NodeView node) throws DeviceAnnotationException {
    String id = node.annotations().get(REGISTRATION);
    if (id == null || id.isBlank()) {
      throw new DeviceAnnotationException("no " + REGISTRATION, null);
    }
    return List.of(new DeviceInfo(id, 0, 1, 1024, 100, WORD, 0, "", List.of(), true, WORD));
  }

  @Override
  public ContainerFit fit(List<DeviceUsage> devices, ContainerDeviceRequest r, FitContext ctx) {
    List<ContainerDevice> free =
        devices.stream()
            .filter(d -> d.used() < d.count())
            .limit(r.nums())
            .map(d -> new ContainerDevice(d.index(), d.id(), WORD, d.totalmem(), 100, 0))
            .toList();
    return free.size() == r.nums()
        ? ContainerFit.success(free)
        : ContainerFit.failure("no free " + WORD);
  }
}
