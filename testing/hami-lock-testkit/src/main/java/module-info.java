/**
 * hami-lock testkit: an in-process Kubernetes API server emulator for tests ({@code
 * dev.hamilock.testkit.ApiServerEmulator}) with its JSON patch ({@code .jsonpatch}) and selector
 * ({@code .selector}) semantics, fluent pod and node seeding, and a simulated kubelet and device
 * plugin, the real kube-apiserver launcher ({@code RealApiServer}) and a JUnit 5 template running
 * one test on either backend ({@code .junit}). A named module, so it runs on the module path
 * without {@code --add-modules jdk.httpserver}: it requires the JDK HTTP server it listens with.
 */
// requires-transitive-automatic: client-java is an automatic module (no module-info upstream);
// the transitive requires is deliberate so users of this module read it without naming it.
@SuppressWarnings("requires-transitive-automatic")
module dev.hamilock.testkit {
  requires jdk.httpserver;
  requires java.net.http;
  // dev.hamilock.testkit.junit (BackendTest): present when the user's tests run on JUnit 5
  requires static org.junit.jupiter.api;
  requires transitive com.fasterxml.jackson.databind;
  requires transitive io.kubernetes.client.java.api;
  requires io.kubernetes.client.java;
  requires okhttp3;
  requires org.slf4j;

  exports dev.hamilock.testkit;
  exports dev.hamilock.testkit.junit;
  exports dev.hamilock.testkit.jsonpatch;
  exports dev.hamilock.testkit.selector;
}
