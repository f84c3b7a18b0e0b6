package dev.hamilock.device.spi;

import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a user's {@link DeviceVendor} enters the stack ({@link VendorRegistry.Builder#build}): its
 * unchecked exception (a bug) or a null where the contract says non-null becomes the method's own
 * typed answer, failing closed, so that no flow sees it escape and no node looks free because its
 * usage could not be read. {@link #parseRequest} throws {@link InvalidResourceRequestException};
 * {@link #decodeNodeDevices} and {@link #decodeAllocated} throw {@link DeviceAnnotationException}
 * (the node's registration is rejected; the node's usage is {@code USAGE_UNKNOWN}); {@link #fit}
 * fails; {@link #needsLock} and {@link #isRegisteredOn} answer true (the lock is taken, the
 * registration decoded); {@link #ownsDeviceType} answers false (the card serves no request); {@link
 * #scoreNode} adds 0; {@link #encodeAllocation} throws {@link VendorException}. Each is logged: at
 * WARN the first time per method and exception class, then at DEBUG (a Filter calls every vendor
 * per node for every pod). The constant keys and {@link #draDrivers()} are read once, at
 * registration.
 */
final class CheckedVendor implements DeviceVendor {
  private static final Logger LOG = LoggerFactory.getLogger(CheckedVendor.class);

  private final DeviceVendor vendor;
  private final String word;
  private final VendorConfig defaultConfig;
  private final Optional<String> nodeLockKey;
  private final String registrationKey;
  private final String toAllocateKey;
  private final String allocatedKey;
  private final List<DraDriver> draDrivers;
  private final Set<String> warned = ConcurrentHashMap.newKeySet(); // method + exception class

  /**
   * @throws VendorRegistrationException if a key or the DRA drivers cannot be read
   */
  static DeviceVendor of(DeviceVendor vendor, String word) {
    if (vendor instanceof CheckedVendor c) {
      return c;
    }
    try {
      return new CheckedVendor(vendor, word);
    } catch (RuntimeException e) {
      throw new VendorRegistrationException(
          "vendor %s (%s) failed at registration: %s"
              .formatted(word, vendor.getClass().getName(), e),
          e);
    }
  }

  private CheckedVendor(DeviceVendor vendor, String word) {
    this.vendor = vendor;
    this.word = word;
    this.defaultConfig = vendor.defaultConfig();
    this.nodeLockKey = java.util.Objects.requireNonNull(vendor.nodeLockKey(), "nodeLockKey()");
    this.registrationKey =
        java.util.Objects.requireNonNull(
            vendor.registrationAnnotationKey(), "registrationAnnotationKey()");
    this.toAllocateKey =
        java.util.Objects.requireNonNull(
            vendor.toAllocateAnnotationKey(), "toAllocateAnnotationKey()");
    this.allocatedKey =
        java.util.Objects.requireNonNull(
            vendor.allocatedAnnotationKey(), "allocatedAnnotationKey()");
    this.draDrivers = List.copyOf(vendor.draDrivers());
  }

  /** The vendor registered, for its class name. */
  DeviceVendor unwrapped() {
    return vendor;
  }

  /** {@code what}: the method's name, then what it was called for. */
  private String bug(String what, Object failure) {
    String why =
        "device vendor %s (%s): %s %s"
            .formatted(
                word,
                vendor.getClass().getName(),
                what,
                failure == null ? "returned null" : "failed: " + failure);
    String method = what.split(" ", 2)[0];
    if (warned.add(method + (failure == null ? "" : " " + failure.getClass().getName()))) {
      LOG.warn("{} (the same failure again is logged at DEBUG)", why);
    } else {
      LOG.debug("{}", why);
    }
    return why;
  }

  @Override
  public String commonWord() {
    return word;
  }

  @Override
  public VendorConfig defaultConfig() {
    return defaultConfig;
  }

  @Override
  public Optional<String> nodeLockKey() {
    return nodeLockKey;
  }

  @Override
  public String registrationAnnotationKey() {
    return registrationKey;
  }

  @Override
  public String toAllocateAnnotationKey() {
    return toAllocateKey;
  }

  @Override
  public String allocatedAnnotationKey() {
    return allocatedKey;
  }

  @Override
  public List<DraDriver> draDrivers() {
    return draDrivers;
  }

  @Override
  public boolean needsLock(PodView pod, VendorConfig config) {
    String what = "needsLock of pod " + pod.key() + " (the lock is taken)";
    return answer(what, () -> vendor.needsLock(pod, config), true);
  }

  @Override
  public Optional<ContainerDeviceRequest> parseRequest(ContainerView container, VendorConfig config)
      throws InvalidResourceRequestException {
    return checked(
        "parseRequest",
        () -> vendor.parseRequest(container, config),
        (why, cause) ->
            new InvalidResourceRequestException(
                container.name(), config.resourceNames().count(), "?", why));
  }

  @Override
  public boolean isRegisteredOn(NodeView node) {
    String what = "isRegisteredOn of node " + node.name() + " (its registration is decoded)";
    return answer(what, () -> vendor.isRegisteredOn(node), true);
  }

  @Override
  public boolean ownsDeviceType(String deviceType) {
    String what = "ownsDeviceType of " + deviceType + " (the card serves none)";
    return answer(what, () -> vendor.ownsDeviceType(deviceType), false);
  }

  @Override
  public List<DeviceInfo> decodeNodeDevices(NodeView node) throws DeviceAnnotationException {
    return checked(
        "decodeNodeDevices of node " + node.name(),
        () -> vendor.decodeNodeDevices(node),
        (why, cause) -> new DeviceAnnotationException(why, null, cause));
  }

  @Override
  public ContainerFit fit(
      List<DeviceUsage> devices, ContainerDeviceRequest request, FitContext context) {
    try {
      return checked("fit", () -> vendor.fit(devices, request, context), VendorException::new);
    } catch (VendorException e) {
      return ContainerFit.failure(e.getMessage());
    }
  }

  @Override
  public Map<String, String> encodeAllocation(List<List<ContainerDevice>> containers) {
    return checked(
        "encodeAllocation", () -> vendor.encodeAllocation(containers), VendorException::new);
  }

  @Override
  public Optional<List<List<ContainerDevice>>> decodeAllocated(PodView pod)
      throws DeviceAnnotationException {
    return checked(
        "decodeAllocated of pod " + pod.key(),
        () -> vendor.decodeAllocated(pod),
        (why, cause) -> new DeviceAnnotationException(why, null, cause));
  }

  @Override
  public double scoreNode(
      NodeView node,
      List<DeviceUsage> vendorDevices,
      List<List<ContainerDevice>> chosen,
      GpuPolicy policy) {
    String what = "scoreNode of node " + node.name() + " (adds 0)";
    return answer(what, () -> vendor.scoreNode(node, vendorDevices, chosen, policy), 0.0);
  }

  @FunctionalInterface
  private interface Call<T, X extends Exception> {
    T run() throws X;
  }

  @FunctionalInterface
  private interface Typed<X extends Exception> {
    X of(String why, Throwable cause);
  }

  /**
   * {@code call}'s answer; its unchecked exception or null as the exception {@code typed} makes.
   */
  private <T, X extends Exception> T checked(String what, Call<T, X> call, Typed<X> typed)
      throws X {
    RuntimeException failure = null;
    try {
      T t = call.run();
      if (t != null) {
        return t;
      }
    } catch (RuntimeException e) {
      failure = e;
    }
    throw typed.of(bug(what, failure), failure);
  }

  /** {@code call}'s answer, or {@code failClosed} for its unchecked exception. */
  private <T> T answer(String what, Call<T, RuntimeException> call, T failClosed) {
    try {
      return call.run();
    } catch (RuntimeException e) {
      bug(what, e);
      return failClosed;
    }
  }

  @Override
  public String toString() {
    return vendor.toString();
  }
}
