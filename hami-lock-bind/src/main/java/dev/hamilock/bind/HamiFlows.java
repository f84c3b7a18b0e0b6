package dev.hamilock.bind;

import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.device.spi.VendorRegistry;

/**
 * HAMi's scheduler-side flows as a stack builds them once, for a scheduler extender ({@code
 * HamiExtender.create(flows, config)}). Implementations are thread-safe.
 */
public interface HamiFlows {

  /** {@return the enabled device vendors the flows were built with} */
  VendorRegistry registry();

  /** {@return the bind flow (HAMi's Bind with re-fit under the node lock, spec §2.3, §3.4)} */
  PodBinder podBinder();

  /** {@return the extender Filter flow (spec §2.2)} */
  ExtenderFilter extenderFilter();

  /** {@return the Filter's reader (e.g. an informer cache over fresh reads)} */
  ClusterReader filterReader();
}
