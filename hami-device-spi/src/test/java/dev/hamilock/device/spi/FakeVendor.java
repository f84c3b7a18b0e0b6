package dev.hamilock.device.spi;

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

/** Minimal test vendor: count + memory resources, first-fit from the end of the list. */
public class FakeVendor implements DeviceVendor {
  private final String word;
  private final String prefix;
  private final CachingRegistrationDecoder decoder;

  public FakeVendor(String word, String prefix) {
    this.word = word;
    this.prefix = prefix;
    this.decoder = new CachingRegistrationDecoder(word, 100);
  }

  @Override
  public String commonWord() {
    return word;
  }

  @Override
  public VendorConfig defaultConfig() {
    return VendorConfig.of(prefix + "/dev", prefix + "/mem");
  }

  @Override
  public Optional<String> nodeLockKey() {
    return Optional.of(prefix + "/lock");
  }

  @Override
  public String registrationAnnotationKey() {
    return "hami.io/node-" + word + "-register";
  }

  @Override
  public String toAllocateAnnotationKey() {
    return "hami.io/" + word + "-devices-to-allocate";
  }

  @Override
  public String allocatedAnnotationKey() {
    return "hami.io/" + word + "-devices-allocated";
  }

  @Override
  public Optional<ContainerDeviceRequest> parseRequest(ContainerView c, VendorConfig config) {
    Optional<BigDecimal> n = c.limitOrRequest(config.resourceNames().count());
    if (n.isEmpty() || n.get().signum() == 0) {
      return Optional.empty();
    }
    int mem =
        config
            .resourceNames()
            .memory()
            .flatMap(c::limitOrRequest)
            .map(BigDecimal::intValue)
            .orElse(0);
    return Optional.of(
        new ContainerDeviceRequest(n.get().intValue(), word, mem, mem == 0 ? 100 : 101, 0));
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
      int mem = r.memreq() > 0 ? r.memreq() : d.totalmem() * r.mempercentagereq() / 100;
      if (d.used() >= d.count()) {
        reasons.add(FitReason.CARD_TIME_SLICING_EXHAUSTED);
      } else if (d.totalmem() - d.usedmem() < mem) {
        reasons.add(FitReason.CARD_INSUFFICIENT_MEMORY);
      } else {
        out.add(new ContainerDevice(d.index(), d.id(), word, mem, 0, 0));
      }
    }
    return out.size() == r.nums()
        ? ContainerFit.success(out)
        : ContainerFit.failure(reasons.format(devices.size()));
  }
}
