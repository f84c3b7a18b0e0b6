/**
 * hami-lock on the official Kubernetes Java client (client-java 27), the lock only: HAMi's node
 * lock as a one-request annotation lock on Node objects, pod-based owner liveness and the shared
 * release watch. Requires core and client-java, nothing else: the bind flow, the device model and
 * the whole-stack facade are in {@code dev.hamilock.k8s.bind} (artifact hami-lock-k8s-bind). Each
 * package's {@code package-info} says what it holds; {@code dev.hamilock.k8s.internal} is exported
 * only to hami-lock-k8s-bind.
 *
 * <p>client-java's jars are automatic modules ({@code io.kubernetes.client.java}, {@code
 * io.kubernetes.client.java.api}); they share no package, so they resolve on the module path.
 */
// module: the qualified exports name modules built after this one (they depend on it), so
// javac warns "module not found" when this one compiles alone.
// requires-transitive-automatic: client-java is an automatic module (no module-info upstream);
// the transitive requires is deliberate so users read its model types without naming it.
@SuppressWarnings({"module", "requires-transitive-automatic"})
module dev.hamilock.k8s {
  requires transitive dev.hamilock.core;
  requires transitive io.kubernetes.client.java.api;
  requires io.kubernetes.client.java;
  requires com.google.gson;
  requires okhttp3;
  requires okio;
  requires dev.failsafe.core;

  exports dev.hamilock.k8s;
  exports dev.hamilock.k8s.lock;
  exports dev.hamilock.k8s.watch;
  exports dev.hamilock.k8s.internal to
      dev.hamilock.k8s.bind;
}
