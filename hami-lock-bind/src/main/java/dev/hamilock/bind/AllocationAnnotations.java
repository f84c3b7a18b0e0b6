package dev.hamilock.bind;

import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.PodView;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/** The allocation annotations HAMi's Filter and Bind write (spec §2.2 step 5-6, §2.3 step 4). */
final class AllocationAnnotations {
  /** Kubernetes label values are at most 63 characters. */
  static final int MAX_LABEL_VALUE = 63;

  /** HAMi's bind phases ({@code pkg/util/types.go}). */
  static final String PHASE_ALLOCATING = "allocating";

  static final String PHASE_SUCCESS = "success";
  static final String PHASE_FAILED = "failed";

  private AllocationAnnotations() {}

  /**
   * Filter annotations: vendor keys, {@code hami.io/vgpu-node} (+ label), {@code
   * hami.io/vgpu-time}.
   */
  static MetadataPatch.Builder filterPatch(
      VendorRegistry registry, PodView pod, String node, PodDevices devices, Instant now) {
    MetadataPatch.Builder b = MetadataPatch.builder().expectedUid(pod.uid());
    registry.allocationAnnotations(devices).forEach(b::setAnnotation);
    b.setAnnotation(HamiAnnotations.VGPU_NODE, node);
    b.setAnnotation(HamiAnnotations.VGPU_TIME, Long.toString(now.getEpochSecond()));
    if (pod.annotations().containsKey(UsageReconstructor.RESERVATION)) { // replaced by these
      b.removeAnnotation(UsageReconstructor.RESERVATION);
    }
    if (node.length() <= MAX_LABEL_VALUE) {
      b.setLabel(HamiAnnotations.VGPU_NODE, node);
    }
    return b;
  }

  /**
   * Filter annotations plus {@code hami.io/bind-phase: allocating} and {@code hami.io/bind-time};
   * the pod's allocation annotations of the {@code dra} vendors (the Filter's, for a vendor that
   * went the DRA route since) are removed: no Allocate consumes them, and HAMi's scheduler would
   * count their cards.
   */
  static MetadataPatch bindPatch(
      VendorRegistry registry,
      PodView pod,
      Set<String> dra,
      String node,
      PodDevices devices,
      Instant now,
      String version) {
    MetadataPatch.Builder b = filterPatch(registry, pod, node, devices, now);
    for (String v : dra) {
      registry
          .vendor(v)
          .ifPresent(
              d ->
                  Stream.of(d.toAllocateAnnotationKey(), d.allocatedAnnotationKey())
                      .filter(pod.annotations()::containsKey)
                      .forEach(b::removeAnnotation));
    }
    return b.setAnnotation(HamiAnnotations.BIND_PHASE, PHASE_ALLOCATING)
        .setAnnotation(HamiAnnotations.BIND_TIME, Long.toString(now.getEpochSecond()))
        .expectedResourceVersion(version)
        .build();
  }

  /** Every annotation key the bind flow writes for the given vendors. */
  static Set<String> annotationKeys(VendorRegistry registry, Set<String> vendors) {
    Set<String> keys = new java.util.LinkedHashSet<>();
    for (String v : vendors) {
      registry
          .vendor(v)
          .ifPresent(
              d -> {
                keys.add(d.toAllocateAnnotationKey());
                keys.add(d.allocatedAnnotationKey());
              });
    }
    keys.addAll(
        List.of(
            HamiAnnotations.VGPU_NODE,
            HamiAnnotations.VGPU_TIME,
            HamiAnnotations.BIND_PHASE,
            HamiAnnotations.BIND_TIME));
    return keys;
  }

  /** Removes every allocation annotation (and the label) of the given vendors. */
  static MetadataPatch clearPatch(
      VendorRegistry registry, Set<String> vendors, String uid, String version) {
    MetadataPatch.Builder b =
        MetadataPatch.builder().expectedUid(uid).expectedResourceVersion(version);
    annotationKeys(registry, vendors).forEach(b::removeAnnotation);
    b.removeLabel(HamiAnnotations.VGPU_NODE);
    return b.build();
  }

  /** Restores the keys the bind flow writes to their values in {@code before}. */
  static MetadataPatch restorePatch(
      VendorRegistry registry, Set<String> vendors, PodView before, String version) {
    MetadataPatch.Builder b =
        MetadataPatch.builder().expectedUid(before.uid()).expectedResourceVersion(version);
    for (String k : annotationKeys(registry, vendors)) {
      Optional.ofNullable(before.annotations().get(k))
          .ifPresentOrElse(v -> b.setAnnotation(k, v), () -> b.removeAnnotation(k));
    }
    Optional.ofNullable(before.labels().get(HamiAnnotations.VGPU_NODE))
        .ifPresentOrElse(
            l -> b.setLabel(HamiAnnotations.VGPU_NODE, l),
            () -> b.removeLabel(HamiAnnotations.VGPU_NODE));
    return b.build();
  }

  /** Whether the pod carries any annotation the bind flow writes. */
  static boolean hasAny(VendorRegistry registry, Set<String> vendors, PodView pod) {
    return annotationKeys(registry, vendors).stream().anyMatch(pod.annotations()::containsKey)
        || pod.labels().containsKey(HamiAnnotations.VGPU_NODE);
  }

  /**
   * The allocation the pod's annotations record for {@code node} (the Filter's choice): every
   * requested vendor's allocated key, decoded. Empty if {@code hami.io/vgpu-node} names another
   * node or a key is missing; a decode error is returned as the reason.
   */
  static Optional<PodDevices> recorded(
      VendorRegistry registry,
      Set<String> vendors,
      PodView pod,
      String node,
      StringBuilder problem) {
    if (!node.equals(pod.annotations().get(HamiAnnotations.VGPU_NODE)) || vendors.isEmpty()) {
      return Optional.empty();
    }
    Map<String, List<List<ContainerDevice>>> byVendor = new LinkedHashMap<>();
    for (String v : vendors) {
      DeviceVendor d = registry.vendor(v).orElse(null);
      if (d == null) {
        return Optional.empty();
      }
      try {
        Optional<List<List<ContainerDevice>>> c = d.decodeAllocated(pod);
        if (c.isEmpty()) {
          return Optional.empty();
        }
        byVendor.put(v, c.get());
      } catch (DeviceAnnotationException e) {
        problem.append("undecodable " + d.allocatedAnnotationKey() + ": " + e.getMessage());
        return Optional.empty();
      }
    }
    return Optional.of(new PodDevices(byVendor));
  }
}
