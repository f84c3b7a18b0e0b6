package dev.hamilock.fabric8.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.annotation.AnnotationTransport.Failure;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A request through a closed client is sent nowhere ({@code sendAsync} throws {@link
 * IllegalStateException}): repeating it cannot succeed, so {@link Fabric8Http#send} fails at once
 * instead of trying 4 more times with 20 to 160 ms pauses (a read of a stack whose client was
 * closed, or a list and watch outliving its client, spent 300 ms per call doing nothing).
 */
class Fabric8HttpClosedClientTest {

  @Test
  void aRequestThroughAClosedClientIsNotRepeated() {
    // what a closed fabric8 client does: its sendAsync throws IllegalStateException
    KubernetesClient closedClient =
        new KubernetesClientBuilder()
            .withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:1").build())
            .build();
    Fabric8Http.Requests derived = Fabric8Http.repeating(closedClient, 0);
    closedClient.close();
    assertThatThrownBy(() -> Fabric8Http.send(derived, "api/v1/nodes/n", b -> b))
        .isInstanceOfSatisfying(
            Failure.class, f -> assertThat(f.getCause()).isInstanceOf(IllegalStateException.class));

    try (KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:1").build())
            .build()) {
      HttpClient real = Fabric8Http.repeating(client, 4).http();
      AtomicInteger sends = new AtomicInteger();
      HttpClient closed =
          (HttpClient)
              Proxy.newProxyInstance(
                  HttpClient.class.getClassLoader(),
                  new Class<?>[] {HttpClient.class},
                  (proxy, method, args) -> {
                    if (method.getName().equals("sendAsync")) {
                      sends.incrementAndGet();
                      throw new IllegalStateException("Client is closed");
                    }
                    try {
                      return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
      Fabric8Http.Requests requests = new Fabric8Http.Requests(client, closed, 4);

      assertThatThrownBy(() -> Fabric8Http.send(requests, "api/v1/nodes/n", b -> b))
          .isInstanceOfSatisfying(
              Failure.class,
              f -> {
                assertThat(f.status()).isZero();
                assertThat(f.isInterruption()).isFalse();
              });
      assertThat(sends).as("sendAsync calls on a closed client").hasValue(1);
    }
  }
}
