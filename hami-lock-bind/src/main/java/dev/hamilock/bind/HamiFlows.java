package dev.hamilock.bind;

import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.device.spi.VendorRegistry;

/**
 * HAMi's scheduler-side flows as one composition root builds them once (the client-java {@code
 * KubernetesHamiStack}, or another client's stack): what a scheduler extender serves ({@code
 * HamiExtender.create(flows, config)} in hami-lock-extender) without wiring a flow of its own.
 * Implementations are thread-safe.
 */
public interface HamiFlows {

  /** {@return the enabled device vendors the flows were built with} */
  VendorRegistry registry();

  /** {@return the bind flow (HAMi's Bind with re-fit under the node lock, spec §2.3, §3.4)} */
  PodBinder podBinder();

  /** {@return the extender Filter flow (spec §2.2)} */
  ExtenderFilter extenderFilter();

  /**
   * @return the reader the Filter reads candidates through (e.g. an informer cache over fresh
   *     reads); an extender's {@code Nodes}-only path reads the pods assigned to a node through it
   */
  ClusterReader filterReader();
}
