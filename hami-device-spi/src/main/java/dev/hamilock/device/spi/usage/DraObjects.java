package dev.hamilock.device.spi.usage;

import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.util.List;

/**
 * The {@code resource.k8s.io/v1} objects usage reconstruction reads to count DRA allocations:
 * ResourceSlices (which card a device is) and ResourceClaims (which devices are allocated). Either
 * every object of the cluster or at least those of the nodes being counted: slices of other nodes
 * and claims allocated elsewhere are ignored. {@link #NONE} on a cluster without {@code
 * resource.k8s.io}.
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
