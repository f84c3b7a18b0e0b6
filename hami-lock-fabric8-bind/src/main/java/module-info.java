/**
 * hami-lock's bind flow on fabric8's {@code kubernetes-client} 8 ({@code
 * dev.hamilock.fabric8.bind}): the cluster ports of hami-lock-bind over fabric8's HTTP client
 * ({@code Fabric8Cluster}) and the whole stack on them ({@code Fabric8HamiStack}: bind's {@code
 * HamiStack} with fabric8's ports and lock backend). The lock itself is hami-lock-fabric8 ({@code
 * dev.hamilock.fabric8}).
 */
// module: javac warns that the name's component "fabric8" ends in a digit; it is the library's
// name. requires-transitive-automatic: fabric8 is an automatic module (no module-info upstream).
@SuppressWarnings({"module", "requires-transitive-automatic"})
module dev.hamilock.fabric8.bind {
  requires transitive dev.hamilock.fabric8;
  requires transitive dev.hamilock.bind;
  requires transitive kubernetes.client.api;

  exports dev.hamilock.fabric8.bind;
}
