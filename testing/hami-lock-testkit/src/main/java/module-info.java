/**
 * hami-lock testkit: an in-process Kubernetes API server emulator for tests ({@code
 * dev.hamilock.testkit.ApiServerEmulator}) with its JSON patch ({@code .jsonpatch}) and selector
 * ({@code .selector}) semantics, fluent pod and node seeding, and a simulated kubelet and device
 * plugin, the real kube-apiserver launcher ({@code RealApiServer}) and a JUnit 5 template running
 * one test on either backend ({@code .junit}). A named module, so it runs on the module path
 * without {@code --add-modules jdk.httpserver}: it requires the JDK HTTP server it listens with.
 */
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
