package dev.hamilock.device.nvidia;

import dev.hamilock.device.spi.ContainerFit;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.DraDriver;
import dev.hamilock.device.spi.FitContext;
import dev.hamilock.device.spi.FitReason;
import dev.hamilock.device.spi.FitReasons;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.InvalidResourceRequestException;
import dev.hamilock.device.spi.PolicyValues;
import dev.hamilock.device.spi.ResourceNames;
import dev.hamilock.device.spi.VendorConfig;
import dev.hamilock.device.spi.codec.CachingRegistrationDecoder;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.PairScoreCodec;
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
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The NVIDIA vendor, as HAMi's {@code pkg/device/nvidia/device.go} (spec §5), with node lock {@code
 * hami.io/mutex.lock} and the keys of {@link NvidiaAnnotations}. Unlike HAMi (same wire format):
 * request values HAMi drops (fractional, negative, beyond int32, e.g. {@code 16Gi} of MiB) raise
 * {@link InvalidResourceRequestException}; MIG-mode devices are never chosen ({@code
 * CardMigTopologyInfeasible}); ResourceQuota is not evaluated; a missing pair score counts 0
 * (§7.31). Thread-safe; registrations decoded once per distinct value.
 */
public final class NvidiaVendor implements DeviceVendor {
  public static final String COMMON_WORD = "NVIDIA";

  /** Device count resource. */
  public static final String GPU = "nvidia.com/gpu";

  /** Device memory resource, MiB. */
  public static final String GPUMEM = "nvidia.com/gpumem";

  /** Device memory resource, % of a card. */
  public static final String GPUMEM_PERCENTAGE = "nvidia.com/gpumem-percentage";

  /** Compute resource, percent of one card. */
  public static final String GPUCORES = "nvidia.com/gpucores";

  public static final String PRIORITY = "nvidia.com/priority";

  private static final Object SELECTORS = new Object();

  private final CachingRegistrationDecoder decoder =
      new CachingRegistrationDecoder(COMMON_WORD, CachingRegistrationDecoder.DEFAULT_MAX_ENTRIES);

  @Override
  public String commonWord() {
    return COMMON_WORD;
  }

  /** HAMi's chart defaults ({@link VendorConfig#of(ResourceNames)}) for the names above. */
  @Override
  public VendorConfig defaultConfig() {
    return VendorConfig.of(
        new ResourceNames(
            GPU,
            Optional.of(GPUMEM),
            Optional.of(GPUMEM_PERCENTAGE),
            Optional.of(GPUCORES),
            Optional.of(PRIORITY)));
  }

  @Override
  public Optional<String> nodeLockKey() {
    return Optional.of(HamiAnnotations.MUTEX_LOCK);
  }

  @Override
  public String registrationAnnotationKey() {
    return NvidiaAnnotations.REGISTER;
  }

  @Override
  public String toAllocateAnnotationKey() {
    return NvidiaAnnotations.TO_ALLOCATE;
  }

  @Override
  public String allocatedAnnotationKey() {
    return NvidiaAnnotations.ALLOCATED;
  }

  /**
   * NVIDIA's {@code gpu.nvidia.com} (NVIDIA/k8s-dra-driver-gpu) and HAMi's {@code
   * hami-core-gpu.project-hami.io} (Project-HAMi/k8s-dra-driver, shareable, with {@code cores}).
   */
  @Override
  public List<DraDriver> draDrivers() {
    return List.of(
        new DraDriver(
            "gpu.nvidia.com",
            "uuid",
            Optional.of("parentUUID"),
            Optional.of("memory"),
            Optional.empty()),
        new DraDriver(
            "hami-core-gpu.project-hami.io",
            "uuid",
            Optional.of("parentUUID"),
            Optional.of("memory"),
            Optional.of("cores")));
  }

  /**
   * HAMi GenerateResourceRequests (§5.3, V46-V47) with strict values: empty when the count resource
   * is absent or 0.
   *
   * @throws InvalidResourceRequestException on a fractional, negative or out-of-range value
   */
  @Override
  public Optional<ContainerDeviceRequest> parseRequest(ContainerView c, VendorConfig config)
      throws InvalidResourceRequestException {
    var names = config.resourceNames();
    Optional<BigDecimal> countQ = c.limitOrRequest(names.count());
    if (countQ.isEmpty()) {
      return Optional.empty();
    }
    int nums = nonNegativeInt(c, names.count(), countQ.get(), Integer.MAX_VALUE);
    if (nums == 0) {
      return Optional.empty();
    }
    int factor = config.memoryFactor();
    int mem = nonNegativeInt(c, names.memory(), Integer.MAX_VALUE / factor, 0) * factor;
    Optional<BigDecimal> p = names.memoryPercentage().flatMap(c::limitOrRequest);
    BigDecimal v =
        p.isEmpty() ? BigDecimal.ZERO : integer(c, names.memoryPercentage().get(), p.get());
    int pct =
        v.signum() > 0
            ? v.min(BigDecimal.valueOf(100)).intValueExact()
            : ContainerDeviceRequest.PERCENTAGE_UNSET;
    if (pct == ContainerDeviceRequest.PERCENTAGE_UNSET && mem == 0) {
      if (config.defaultMemory() != 0) {
        mem = config.defaultMemory();
      } else {
        pct = 100;
      }
    }
    int cores = nonNegativeInt(c, names.cores(), Integer.MAX_VALUE, config.defaultCores());
    return Optional.of(new ContainerDeviceRequest(nums, COMMON_WORD, mem, pct, cores));
  }

  private static int nonNegativeInt(ContainerView c, String resource, BigDecimal v, int max)
      throws InvalidResourceRequestException {
    if (integer(c, resource, v).signum() < 0) {
      throw new InvalidResourceRequestException(
          c.name(), resource, v.toPlainString(), "must not be negative");
    }
    if (v.compareTo(BigDecimal.valueOf(max)) > 0) {
      boolean mib = resource.equals(GPUMEM) || max != Integer.MAX_VALUE;
      String why =
          mib ? " (int32 / memoryFactor; quantities are MiB, e.g. use 16384 not 16Gi)" : "";
      throw new InvalidResourceRequestException(
          c.name(), resource, v.toPlainString(), "exceeds " + max + why);
    }
    return v.intValueExact();
  }

  /** The value of an optional resource of the container, {@code absent} when it has none. */
  private static int nonNegativeInt(ContainerView c, Optional<String> resource, int max, int absent)
      throws InvalidResourceRequestException {
    Optional<BigDecimal> v = resource.flatMap(c::limitOrRequest);
    return v.isPresent() ? nonNegativeInt(c, resource.get(), v.get(), max) : absent;
  }

  private static BigDecimal integer(ContainerView c, String resource, BigDecimal v)
      throws InvalidResourceRequestException {
    if (!Quantities.isInteger(v)) {
      throw new InvalidResourceRequestException(
          c.name(), resource, v.toPlainString(), "must be an integer");
    }
    return v;
  }

  /**
   * HAMi GetNodeDevices (V41): decodes {@code hami.io/node-nvidia-register} (JSON or colon, cached
   * per value) into devices tagged {@code NVIDIA}; validates the pair-score annotation if present.
   *
   * @throws DeviceAnnotationException {@code annos not found hami.io/node-nvidia-register}, {@code
   *     no gpu found on node}, or a format/pair-score error
   */
  @Override
  public List<DeviceInfo> decodeNodeDevices(NodeView node) throws DeviceAnnotationException {
    String v = node.annotations().get(NvidiaAnnotations.REGISTER);
    if (v == null) {
      throw new DeviceAnnotationException("annos not found " + NvidiaAnnotations.REGISTER, null);
    }
    List<DeviceInfo> devices = decoder.decode(v);
    if (devices.isEmpty()) {
      throw new DeviceAnnotationException("no gpu found on node", v);
    }
    for (DeviceInfo d : devices) {
      if (!d.mode().isEmpty() && !PolicyValues.VGPU_MODE_WORDS.contains(d.mode())) {
        String words = String.join(", ", PolicyValues.VGPU_MODE_WORDS);
        String why = "device %s of %s has unknown mode \"%s\" (accepted: %s or empty)";
        throw new DeviceAnnotationException(
            why.formatted(d.id(), NvidiaAnnotations.REGISTER, d.mode(), words), v);
      }
    }
    String scores = node.annotations().get(NvidiaAnnotations.PAIR_SCORE);
    if (scores != null) {
      PairScoreCodec.decode(scores);
    }
    return devices;
  }

  /**
   * HAMi Fit (§5.7) over devices sorted by policy, walking from the last element.
   *
   * @return chosen devices, or the reason ({@code <count>/<cards> <Reason>, …})
   */
  @Override
  public ContainerFit fit(List<DeviceUsage> devices, ContainerDeviceRequest k, FitContext ctx) {
    NvidiaSelectors sel =
        ctx.podMemo(SELECTORS, p -> NvidiaSelectors.fromAnnotations(p.key(), p.annotations()));
    String cordon = ctx.node().annotations().get(HamiAnnotations.DEVICE_CORDON);
    Set<String> cordoned =
        cordon == null ? Set.of() : Set.copyOf(NvidiaSelectors.list(cordon, false));
    boolean topology = ctx.policy().topologyAware();
    boolean typeOk = COMMON_WORD.equals(k.type());
    int original = k.nums();
    int nums = original;
    int cores = Math.min(k.coresreq(), 100);
    int prevNuma = -1;
    List<ContainerDevice> chosen = new ArrayList<>(original);
    FitReasons reasons = new FitReasons();
    for (int i = devices.size() - 1; i >= 0; i--) {
      DeviceUsage d = devices.get(i);
      if (!d.health()) {
        reasons.add(FitReason.CARD_NOT_HEALTH);
        continue;
      }
      if (cordoned.contains(d.id())) {
        reasons.add(FitReason.CARD_CORDONED);
        continue;
      }
      if (!typeOk || !sel.typeMatches(d.type(), d.mode())) {
        reasons.add(FitReason.CARD_TYPE_MISMATCH);
        continue;
      }
      if (sel.numaBind() && d.numa() != prevNuma) {
        if (nums != original) {
          reasons.add(FitReason.NUMA_NOT_FIT, chosen.size());
        }
        nums = original;
        chosen.clear();
        prevNuma = d.numa();
      }
      if (!sel.uuidMatches(d.id())) {
        reasons.add(FitReason.CARD_UUID_MISMATCH);
        continue;
      }
      long memreq = // MiB: memreq, else the percentage of the card
          k.memreq() > 0 || k.mempercentagereq() == ContainerDeviceRequest.PERCENTAGE_UNSET
              ? k.memreq()
              : (long) d.totalmem() * k.mempercentagereq() / 100;
      FitReason mismatch = cardMismatch(d, memreq, cores, ctx.policy().mutex());
      if (mismatch != null) {
        reasons.add(mismatch);
        continue;
      }
      if (!topology) {
        nums--;
      }
      chosen.add(new ContainerDevice(d.index(), d.id(), COMMON_WORD, (int) memreq, cores, 0));
      if (nums == 0 && !topology) {
        return ContainerFit.success(chosen);
      }
    }
    if (topology && chosen.size() >= original) {
      return topologyFit(chosen, original, ctx.node());
    }
    if (!chosen.isEmpty()) {
      reasons.add(FitReason.ALLOCATED_CARDS_INSUFFICIENT_REQUEST, chosen.size());
    }
    return ContainerFit.failure(reasons.format(devices.size()));
  }

  /**
   * HAMi Fit's capacity checks of one card, in its order (§5.7): the first reason the card does not
   * fit ({@code memreq} MiB, {@code cores} % of the card, at most 100), or {@code null} if it fits.
   */
  private static FitReason cardMismatch(DeviceUsage d, long memreq, int cores, boolean mutex) {
    if (d.count() <= d.used()) {
      return FitReason.CARD_TIME_SLICING_EXHAUSTED;
    }
    if (mutex && d.used() > 0) {
      return FitReason.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT;
    }
    if ((long) d.totalmem() - d.usedmem() < memreq) {
      return FitReason.CARD_INSUFFICIENT_MEMORY;
    }
    if ((long) d.totalcore() - d.usedcores() < cores) {
      return FitReason.CARD_INSUFFICIENT_CORE;
    }
    if (d.totalcore() == 100 && cores == 100 && d.used() > 0) {
      return FitReason.EXCLUSIVE_DEVICE_ALLOCATE_CONFLICT;
    }
    if (d.totalcore() != 0 && d.usedcores() == d.totalcore() && cores == 0) {
      return FitReason.CARD_COMPUTE_UNITS_EXHAUSTED;
    }
    return "mig".equals(d.mode()) ? FitReason.CARD_MIG_TOPOLOGY_INFEASIBLE : null;
  }

  /** Topology-aware Fit's end: exactly enough cards, or the best-scored subset of them. */
  private static ContainerFit topologyFit(
      List<ContainerDevice> chosen, int original, NodeView node) {
    if (chosen.size() == original) {
      return ContainerFit.success(chosen);
    }
    String v = node.annotations().get(NvidiaAnnotations.PAIR_SCORE);
    try {
      var scores = v == null ? Map.<String, Map<String, Integer>>of() : PairScoreCodec.decode(v);
      return ContainerFit.success(Topology.select(chosen, original, scores));
    } catch (DeviceAnnotationException e) {
      return ContainerFit.failure(
          "invalid " + NvidiaAnnotations.PAIR_SCORE + ": " + e.getMessage());
    }
  }
}
