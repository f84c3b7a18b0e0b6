package com.example.npu;

import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.FitReason;
import dev.hamilock.device.spi.FitReasons;
import dev.hamilock.device.spi.InvalidResourceRequestException;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.codec.CachingRegistrationDecoder;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.NodeRegistrationCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.Quantities;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code example.com/npu} device vendor: a made-up accelerator written by a third party against
 * hami-lock's {@link DeviceVendor} SPI only, to show that new hardware plugs in without touching
 * the library (it is modelled on HAMi's simpler vendors, {@code pkg/device/*}).
 *
 * <ul>
 *   <li>CommonWord {@value #COMMON_WORD}; resources {@value #NPU} (device count) and {@value
 *       #NPU_MEMORY} (device memory per device, MiB; absent = the whole device).
 *   <li>Node lock key {@value #LOCK_KEY} (its own, not HAMi's {@code hami.io/mutex.lock}), so NPU
 *       binds never contend with NVIDIA-only binds on the same node.
 *   <li>Node registration {@value #REGISTER_ANNOTATION} in HAMi's JSON registration format (the
 *       SPI's {@link NodeRegistrationCodec}), e.g. {@code
 *       [{"id":"NPU-0","count":4,"devmem":32768,"devcore":100,"type":"Example-NPU","health":true}]}.
 *   <li>Allocations in {@value #TO_ALLOCATE_ANNOTATION} and {@value #ALLOCATED_ANNOTATION}, HAMi's
 *       pod-devices format ({@code NPU-0,NPU,8192,0:;}).
 *   <li>Fit: walks the policy-sorted devices from the last, skipping unhealthy cards, full split
 *       slots and cards with too little free memory; HAMi's {@code <n>/<cards> <Reason>} texts on
 *       failure.
 * </ul>
 *
 * <p>Stateless apart from a bounded registration cache; thread-safe; public no-argument constructor
 * as {@link java.util.ServiceLoader} requires.
 */
public final class NpuVendor implements DeviceVendor {
  /** Vendor key (HAMi CommonWord). */
  public static final String COMMON_WORD = "NPU";

  /** Device count resource. */
  public static final String NPU = "example.com/npu";

  /** Device memory resource, MiB per device. */
  public static final String NPU_MEMORY = "example.com/npu-memory";

  /** Node annotation of this vendor's node lock. */
  public static final String LOCK_KEY = "example.com/npu.lock";

  /** Node annotation the (example) device plugin registers devices under. */
  public static final String REGISTER_ANNOTATION = "example.com/node-npu-register";

  /** Pod annotation the device plugin consumes. */
  public static final String TO_ALLOCATE_ANNOTATION = "example.com/npu-devices-to-allocate";

  /** Pod annotation schedulers read usage from. */
  public static final String ALLOCATED_ANNOTATION = "example.com/npu-devices-allocated";

  private final CachingRegistrationDecoder decoder =
      new CachingRegistrationDecoder(COMMON_WORD, CachingRegistrationDecoder.DEFAULT_MAX_ENTRIES);

  /** Creates the vendor (called by {@link java.util.ServiceLoader}). */
  public NpuVendor() {}

  @Override
  public String commonWord() {
    return COMMON_WORD;
  }

  /**
   * @return count {@value #NPU}, memory {@value #NPU_MEMORY}, no default memory (whole device)
   */
  @Override
  public VendorConfig defaultConfig() {
    return VendorConfig.of(NPU, NPU_MEMORY);
  }

  /**
   * @return {@value #LOCK_KEY}
   */
  @Override
  public Optional<String> nodeLockKey() {
    return Optional.of(LOCK_KEY);
  }

  /**
   * @return {@value #REGISTER_ANNOTATION}
   */
  @Override
  public String registrationAnnotationKey() {
    return REGISTER_ANNOTATION;
  }

  /**
   * @return {@value #TO_ALLOCATE_ANNOTATION}
   */
  @Override
  public String toAllocateAnnotationKey() {
    return TO_ALLOCATE_ANNOTATION;
  }

  /**
   * @return {@value #ALLOCATED_ANNOTATION}
   */
  @Override
  public String allocatedAnnotationKey() {
    return ALLOCATED_ANNOTATION;
  }

  /**
   * Reads {@value #NPU} (count) and {@value #NPU_MEMORY} (MiB per device, times the configured
   * memory factor) from the container's limits, else requests.
   *
   * @param c the container
   * @param config resource names and defaults
   * @return the request; empty when the count is absent or 0
   * @throws InvalidResourceRequestException on a fractional, negative or out-of-range value, naming
   *     container, resource and value
   */
  @Override
  public Optional<ContainerDeviceRequest> parseRequest(ContainerView c, VendorConfig config)
      throws InvalidResourceRequestException {
    String countName = config.resourceNames().count();
    Optional<BigDecimal> count = c.limitOrRequest(countName);
    if (count.isEmpty()) {
      return Optional.empty();
    }
    int nums = nonNegativeInt(c, countName, count.get(), Integer.MAX_VALUE);
    if (nums == 0) {
      return Optional.empty();
    }
    int factor = Math.max(1, config.memoryFactor());
    int mem = config.defaultMemory();
    Optional<String> memName = config.resourceNames().memory();
    if (memName.isPresent()) {
      Optional<BigDecimal> m = c.limitOrRequest(memName.get());
      if (m.isPresent()) {
        mem = nonNegativeInt(c, memName.get(), m.get(), Integer.MAX_VALUE / factor) * factor;
      }
    }
    int pct = mem == 0 ? 100 : ContainerDeviceRequest.PERCENTAGE_UNSET;
    return Optional.of(new ContainerDeviceRequest(nums, COMMON_WORD, mem, pct, 0));
  }

  private static int nonNegativeInt(ContainerView c, String resource, BigDecimal v, int max)
      throws InvalidResourceRequestException {
    if (!Quantities.isInteger(v)) {
      throw new InvalidResourceRequestException(
          c.name(),
          resource,
          v.toPlainString(),
          "must be an integer (memory is in MiB, e.g. 8192 not 8Gi)");
    }
    if (v.signum() < 0) {
      throw new InvalidResourceRequestException(
          c.name(), resource, v.toPlainString(), "must not be negative");
    }
    if (v.compareTo(BigDecimal.valueOf(max)) > 0) {
      throw new InvalidResourceRequestException(
          c.name(), resource, v.toPlainString(), "exceeds " + max);
    }
    return v.intValueExact();
  }

  /**
   * Decodes {@value #REGISTER_ANNOTATION} (JSON or HAMi colon format, cached per value).
   *
   * @param node the node
   * @return devices tagged {@value #COMMON_WORD}
   * @throws DeviceAnnotationException {@code annos not found example.com/node-npu-register}, {@code
   *     no NPU found on node}, or a format error of the codec
   */
  @Override
  public List<DeviceInfo> decodeNodeDevices(NodeView node) throws DeviceAnnotationException {
    String v = node.annotations().get(REGISTER_ANNOTATION);
    if (v == null) {
      throw new DeviceAnnotationException("annos not found " + REGISTER_ANNOTATION, null);
    }
    List<DeviceInfo> devices = decoder.decode(v);
    if (devices.isEmpty()) {
      throw new DeviceAnnotationException("no NPU found on node " + node.name(), v);
    }
    return devices;
  }

  /**
   * Chooses {@code request.nums()} distinct devices, walking the policy-sorted list from the last
   * (HAMi Fit order).
   *
   * @param devices this node's devices, sorted by policy, with current usage
   * @param request the container's request
   * @param context pod, node and policy (unused: this vendor has no selectors)
   * @return the devices with the memory each gets (MiB; the whole free device memory when no memory
   *     was requested), or HAMi's per-card reasons
   */
  @Override
  public ContainerFit fit(
      List<DeviceUsage> devices, ContainerDeviceRequest request, FitContext context) {
    FitReasons reasons = new FitReasons();
    List<ContainerDevice> chosen = new ArrayList<>(request.nums());
    for (int i = devices.size() - 1; i >= 0 && chosen.size() < request.nums(); i--) {
      DeviceUsage d = devices.get(i);
      int mem =
          request.memreq() > 0
              ? request.memreq()
              : (int) ((long) d.totalmem() * Math.min(100, request.mempercentagereq()) / 100);
      if (!COMMON_WORD.equals(d.vendor())) {
        reasons.add(FitReason.CARD_TYPE_MISMATCH);
      } else if (!d.health()) {
        reasons.add(FitReason.CARD_NOT_HEALTH);
      } else if (d.used() >= d.count()) {
        reasons.add(FitReason.CARD_TIME_SLICING_EXHAUSTED);
      } else if (d.totalmem() - d.usedmem() < mem) {
        reasons.add(FitReason.CARD_INSUFFICIENT_MEMORY);
      } else {
        chosen.add(new ContainerDevice(d.index(), d.id(), COMMON_WORD, mem, 0, 0));
      }
    }
    if (chosen.size() == request.nums()) {
      return ContainerFit.success(chosen);
    }
    if (reasons.isEmpty()) {
      reasons.add(FitReason.ALLOCATED_CARDS_INSUFFICIENT_REQUEST, 1);
    }
    return ContainerFit.failure(reasons.format(devices.size()));
  }
}
