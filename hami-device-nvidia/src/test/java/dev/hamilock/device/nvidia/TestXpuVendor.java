package dev.hamilock.device.nvidia;

import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.FitReason;
import dev.hamilock.device.spi.FitReasons;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.codec.CachingRegistrationDecoder;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * TEST-ONLY second vendor, discovered through src/test/resources/META-INF/services: own CommonWord,
 * resources, registration key, allocation keys and lock key.
 */
public final class TestXpuVendor implements DeviceVendor {
  static final String WORD = "TESTXPU";
  static final String LOCK = "test.example/xpu.lock";
  private final CachingRegistrationDecoder decoder = new CachingRegistrationDecoder(WORD, 100);

  @Override
  public String commonWord() {
    return WORD;
  }

  /**
   * Registered types are model names ("Acme X1") without the common word: the SPI predicate is
   * overridden.
   */
  @Override
  public boolean ownsDeviceType(String type) {
    return type.startsWith("Acme ");
  }

  @Override
  public VendorConfig defaultConfig() {
    return VendorConfig.of("test.example/xpu", "test.example/xpu-mem");
  }

  @Override
  public Optional<String> nodeLockKey() {
    return Optional.of(LOCK);
  }

  @Override
  public String registrationAnnotationKey() {
    return "hami.io/node-testxpu-register";
  }

  @Override
  public String toAllocateAnnotationKey() {
    return "hami.io/testxpu-devices-to-allocate";
  }

  @Override
  public String allocatedAnnotationKey() {
    return "hami.io/testxpu-devices-allocated";
  }

  @Override
  public Optional<ContainerDeviceRequest> parseRequest(ContainerView c, VendorConfig config) {
    Optional<BigDecimal> n = c.limitOrRequest(config.resourceNames().count());
    if (n.isEmpty() || n.get().signum() == 0) {
      return Optional.empty();
    }
    int mem = c.limitOrRequest("test.example/xpu-mem").map(BigDecimal::intValue).orElse(0);
    return Optional.of(
        new ContainerDeviceRequest(n.get().intValue(), WORD, mem, mem == 0 ? 100 : 101, 0));
  }

  @Override
  public List<DeviceInfo> decodeNodeDevices(NodeView node) throws DeviceAnnotationException {
    String v = node.annotations().get(registrationAnnotationKey());
    if (v == null) {
      throw new DeviceAnnotationException("annos not found " + registrationAnnotationKey(), null);
    }
    return decoder.decode(v);
  }

  @Override
  public ContainerFit fit(List<DeviceUsage> devices, ContainerDeviceRequest r, FitContext ctx) {
    List<ContainerDevice> out = new ArrayList<>();
    FitReasons reasons = new FitReasons();
    for (int i = devices.size() - 1; i >= 0 && out.size() < r.nums(); i--) {
      DeviceUsage d = devices.get(i);
      int mem = r.memreq() > 0 ? r.memreq() : d.totalmem();
      if (!d.vendor().equals(WORD)) {
        reasons.add(FitReason.CARD_TYPE_MISMATCH);
      } else if (d.used() >= d.count()) {
        reasons.add(FitReason.CARD_TIME_SLICING_EXHAUSTED);
      } else if (d.totalmem() - d.usedmem() < mem) {
        reasons.add(FitReason.CARD_INSUFFICIENT_MEMORY);
      } else {
        out.add(new ContainerDevice(d.index(), d.id(), WORD, mem, 0, 0));
      }
    }
    return out.size() == r.nums()
        ? ContainerFit.success(out)
        : ContainerFit.failure(reasons.format(devices.size()));
  }
}
