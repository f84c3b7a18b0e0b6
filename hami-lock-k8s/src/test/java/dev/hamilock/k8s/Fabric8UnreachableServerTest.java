package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.fabric8.Fabric8LockStore;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A new user's run of the fabric8 README's snippet with fabric8's default {@code Config} against no
 * API server did not return for more than 200 s: fabric8 repeated each refused connection up to 10
 * times (100 ms back-off, doubling) under the store's own 5 attempts. The store now takes no
 * repetitions from fabric8 and fails within its own attempts, naming the server it could not reach.
 */
class Fabric8UnreachableServerTest {

  @Test
  void withFabric8sDefaultRetriesTheStoreFailsWithinItsOwnAttemptsNamingTheServer()
      throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: connections are refused
    }
    Config config = new ConfigBuilder().withMasterUrl("http://127.0.0.1:" + port).build();
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      var store = Fabric8LockStore.builder(client).build();
      // a hang guard (before: minutes), not a timing assertion
      assertTimeoutPreemptively(
          Duration.ofSeconds(60),
          () ->
              assertThatThrownBy(() -> store.read("gpu-node-1", "hami.io/mutex.lock"))
                  .isInstanceOf(LockBackendException.class)
                  .hasMessageContaining("127.0.0.1:" + port));
    }
  }
}
