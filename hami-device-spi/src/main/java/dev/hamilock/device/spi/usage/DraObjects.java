package dev.hamilock.device.spi.usage;

import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.util.List;

/**
 * The ResourceSlices and ResourceClaims ({@code resource.k8s.io/v1}) usage counts DRA allocations
 * from: at least those of the nodes being counted (others are ignored).
 *
 * @param slices ResourceSlices, immutable
 * @param claims ResourceClaims (allocated or not), immutable
 */
public record DraObjects(List<ResourceSliceView> slices, List<ResourceClaimView> claims) {
  /** No DRA objects: usage is that of HAMi's annotations alone. */
  public static final DraObjects NONE = new DraObjects(List.of(), List.of());

  public DraObjects {
    slices = List.copyOf(slices);
    claims = List.copyOf(claims);
  }
}
