/**
 * hami-lock bind flow, free of any Kubernetes client: the cluster ports
 * ({@code dev.hamilock.bind.cluster}), the bind flow with re-fit under the node lock, the
 * extender filter step and the device-plugin hand-off ({@code dev.hamilock.bind}), an in-memory
 * cluster ({@code dev.hamilock.bind.memory}) and the reusable concurrency scenario, simulated
 * device plugin, physical ledger and invariant checker ({@code dev.hamilock.bind.testing}).
 */
module dev.hamilock.bind {
  requires transitive dev.hamilock.core;
  requires transitive dev.hamilock.device.spi;
  requires org.slf4j;

  exports dev.hamilock.bind;
  exports dev.hamilock.bind.cluster;
  exports dev.hamilock.bind.memory;
  exports dev.hamilock.bind.testing;
}
