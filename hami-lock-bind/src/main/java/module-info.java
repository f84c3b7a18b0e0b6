/**
 * hami-lock bind flow, free of any Kubernetes client: the cluster ports ({@code
 * dev.hamilock.bind.cluster}) and the bind flow with re-fit under the node lock, the extender
 * filter step and the device-plugin hand-off ({@code dev.hamilock.bind}). An in-memory cluster and
 * the gang-bind scenario support for tests live in {@code testing/hami-lock-bind-testkit}.
 */
module dev.hamilock.bind {
  requires transitive dev.hamilock.core;
  requires transitive dev.hamilock.device.spi;
  requires org.slf4j;

  exports dev.hamilock.bind;
  exports dev.hamilock.bind.cluster;
}
