/**
 * hami-lock on fabric8's {@code kubernetes-client} 8: the Node-annotation lock store, the node
 * watch that wakes waiters and the pod owner liveness ({@code dev.hamilock.fabric8}). fabric8's
 * jars are automatic modules ({@code kubernetes.client.api}, {@code kubernetes.model.core}, …);
 * this module requires {@code java.net.http} so that fabric8's JDK HTTP client ({@code
 * kubernetes.httpclient.jdk}, an automatic module that cannot declare it) finds it.
 */
// module: javac warns that the name's last component "fabric8" ends in a digit; it is the
// library's name. requires-transitive-automatic: fabric8 is an automatic module (no module-info
// upstream); the transitive requires is deliberate so users read KubernetesClient without naming
// it.
@SuppressWarnings({"module", "requires-transitive-automatic"})
module dev.hamilock.fabric8 {
  requires transitive dev.hamilock.core;
  requires transitive kubernetes.client.api;
  requires kubernetes.model.core;
  requires kubernetes.model.common;
  requires dev.failsafe.core;
  requires java.net.http;

  exports dev.hamilock.fabric8;
  exports dev.hamilock.fabric8.internal to
      dev.hamilock.fabric8.bind;
}
