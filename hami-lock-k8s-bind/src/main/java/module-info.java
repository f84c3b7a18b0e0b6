/**
 * hami-lock's bind flow on client-java: the cluster ports of hami-lock-bind over raw, schema-free
 * requests ({@code dev.hamilock.k8s.bind}: {@code KubernetesCluster}), the V1Pod/V1Node → view
 * mapper ({@code dev.hamilock.k8s.view}: {@code KubernetesViews}) and the whole-stack facade that
 * exposes HAMi's flows ({@code dev.hamilock.k8s.stack}: {@code KubernetesHamiStack}: bind, Filter,
 * device-plugin hand-off). The lock itself is hami-lock-k8s ({@code dev.hamilock.k8s}).
 */
// requires-transitive-automatic: client-java is an automatic module (no module-info upstream);
// the transitive requires is deliberate so users of this module read it without naming it.
@SuppressWarnings("requires-transitive-automatic")
module dev.hamilock.k8s.bind {
  requires transitive dev.hamilock.k8s;
  requires transitive dev.hamilock.bind;
  requires transitive dev.hamilock.device.spi;
  requires transitive io.kubernetes.client.java.api;
  requires io.kubernetes.client.java;
  requires okhttp3;
  requires okio;
  requires org.slf4j;

  exports dev.hamilock.k8s.bind;
  exports dev.hamilock.k8s.view;
  exports dev.hamilock.k8s.stack;
}
