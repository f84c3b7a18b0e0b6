package dev.hamilock.device.spi;

import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.codec.PodDevicesCodec;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.ContainerDeviceRequest;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A device backend (HAMi {@code Devices}, {@code pkg/device/devices.go}; spec §4.1), discovered
 * with {@link java.util.ServiceLoader} ({@code provides dev.hamilock.device.spi.DeviceVendor with
 * …} plus {@code META-INF/services}). Implementations are stateless apart from caches, thread-safe,
 * and have a public no-argument constructor; configuration is passed in as {@link VendorConfig}.
 */
public interface DeviceVendor {

  /** Vendor key (HAMi CommonWord, e.g. {@code NVIDIA}), the type of requests and allocations. */
  String commonWord();

  /** Built-in configuration (HAMi chart defaults), used when the registry is given none. */
  VendorConfig defaultConfig();

  /** Node annotation key of this vendor's node lock ({@code hami.io/mutex.lock}); empty if none. */
  Optional<String> nodeLockKey();

  /** Node annotation key of the registration (e.g. {@code hami.io/node-nvidia-register}). */
  String registrationAnnotationKey();

  /** Pod annotation key the device plugin consumes (HAMi InRequestDevices). */
  String toAllocateAnnotationKey();

  /** Pod annotation key schedulers read usage from (HAMi SupportDevices). */
  String allocatedAnnotationKey();

  /**
   * Whether binding the pod needs this vendor's node lock: some regular container asks for a
   * positive count resource (HAMi LockNode predicate).
   */
  default boolean needsLock(PodView pod, VendorConfig config) {
    String count = config.resourceNames().count();
    return pod.containers().stream()
        .anyMatch(c -> c.limitOrRequest(count).filter(v -> v.signum() > 0).isPresent());
  }

  /**
   * Parses one container's resources into a request, empty if it asks for none of this vendor's
   * devices (HAMi GenerateResourceRequests); throws on values HAMi would silently drop.
   */
  Optional<ContainerDeviceRequest> parseRequest(ContainerView container, VendorConfig config)
      throws InvalidResourceRequestException;

  /** Whether the node carries this vendor's registration annotation at all. */
  default boolean isRegisteredOn(NodeView node) {
    return node.annotations().containsKey(registrationAnnotationKey());
  }

  /**
   * Whether a registered device {@code type} text may serve this vendor's requests (HAMi {@code
   * getNodeResources}: it contains {@link #commonWord()}, case-insensitively; spec §5.6).
   */
  default boolean ownsDeviceType(String deviceType) {
    if (deviceType == null) {
      return false;
    }
    String word = commonWord();
    for (int i = 0, last = deviceType.length() - word.length(); i <= last; i++) {
      if (deviceType.regionMatches(true, i, word, 0, word.length())) { // no allocation
        return true;
      }
    }
    return false;
  }

  /**
   * Decodes the node's registration (HAMi GetNodeDevices); throws if absent, empty or malformed.
   */
  List<DeviceInfo> decodeNodeDevices(NodeView node) throws DeviceAnnotationException;

  /** HAMi Fit over this vendor's devices sorted by policy, from the last; never throws. */
  ContainerFit fit(List<DeviceUsage> devices, ContainerDeviceRequest request, FitContext context);

  /** The pod's allocation as to-allocate and allocated annotations (HAMi PatchAnnotations). */
  default Map<String, String> encodeAllocation(List<List<ContainerDevice>> containers) {
    if (containers.isEmpty()) {
      return Map.of();
    }
    String v = PodDevicesCodec.encode(containers);
    Map<String, String> m = new LinkedHashMap<>();
    m.put(toAllocateAnnotationKey(), v);
    m.put(allocatedAnnotationKey(), v);
    return m;
  }

  /** Decodes the pod's allocated annotation (per container, strict), empty if absent. */
  default Optional<List<List<ContainerDevice>>> decodeAllocated(PodView pod)
      throws DeviceAnnotationException {
    String v = pod.annotations().get(allocatedAnnotationKey());
    return v == null ? Optional.empty() : Optional.of(PodDevicesCodec.decode(v));
  }

  /**
   * The DRA drivers whose devices are this vendor's cards ({@link
   * dev.hamilock.device.spi.usage.UsageReconstructor#plusDra}); each driver at most once.
   */
  default List<DraDriver> draDrivers() {
    return List.of();
  }

  /** Vendor addition to the node score (HAMi ScoreNode) on pre-pod usage; 0 by default. */
  default double scoreNode(
      NodeView node,
      List<DeviceUsage> vendorDevices,
      List<List<ContainerDevice>> chosen,
      GpuPolicy policy) {
    return 0;
  }
}
