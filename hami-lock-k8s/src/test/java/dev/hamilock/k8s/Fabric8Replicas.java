package dev.hamilock.k8s;

import dev.hamilock.core.NodeLock;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.fabric8.Fabric8LockStore;
import dev.hamilock.fabric8.Fabric8OwnerLiveness;
import dev.hamilock.testkit.KubeBackend;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.InstantSource;
import java.util.Map;
import java.util.function.Consumer;

/**
 * fabric8 replicas of the backend-templated suites: a fabric8 client configured from the backend's
 * kubeconfig (the emulator's or the real kube-apiserver's), and hami-lock-fabric8's lock on it.
 */
final class Fabric8Replicas {

  private Fabric8Replicas() {}

  static KubernetesClient client(KubeBackend k8s) {
    return client(k8s, b -> {});
  }

  /**
   * @param k8s the backend
   * @param http changes to fabric8's HTTP client builder (e.g. an interceptor)
   * @return a client with 5 s request timeout and no client-side retries (the store decides)
   */
  static KubernetesClient client(KubeBackend k8s, Consumer<HttpClient.Builder> http) {
    try {
      Config config = Config.fromKubeconfig(Files.readString(k8s.kubeconfigFile()));
      config.setRequestTimeout(5_000);
      config.setRequestRetryBackoffLimit(0);
      return new KubernetesClientBuilder()
          .withConfig(config)
          .withHttpClientBuilderConsumer(http)
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * @param client a fabric8 client
   * @param clock the lock's clock
   * @return a lock on fabric8 with HAMi's defaults (5 min timeout, pod liveness)
   */
  static NodeLock lock(KubernetesClient client, InstantSource clock) {
    return StoreNodeLock.builder(Fabric8LockStore.builder(client).build())
        .clock(clock)
        .environment(Map.of())
        .ownerLiveness(Fabric8OwnerLiveness.create(client))
        .build();
  }
}
