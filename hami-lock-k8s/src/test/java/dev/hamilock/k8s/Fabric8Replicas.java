package dev.hamilock.k8s;

import dev.hamilock.core.NodeLock;
import dev.hamilock.fabric8.Fabric8LockStack;
import dev.hamilock.testkit.KubeBackend;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.function.BooleanSupplier;
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
   * @return the node lock of a {@link Fabric8LockStack} with HAMi's defaults (5 min timeout, pod
   *     liveness) and no watch (nothing to close)
   */
  static NodeLock lock(KubernetesClient client, InstantSource clock) {
    return Fabric8LockStack.builder(client)
        .clock(clock)
        .environment(Map.of())
        .watch(false)
        .build()
        .nodeLock();
  }

  /**
   * @param k8s the backend
   * @return a client-java lock stack beside the fabric8 replicas (HAMi's defaults, no watch)
   */
  static KubernetesLockStack clientJavaLocks(KubeBackend k8s) {
    return KubernetesLockStack.builder(k8s.newApiClient(Duration.ofSeconds(5)))
        .environment(Map.of())
        .watch(false)
        .build();
  }

  /**
   * Waits for an event of a watch (bounded: 30 s), not for a time.
   *
   * @param condition the event
   * @return whether it happened within 30 s
   */
  static boolean awaitTrue(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(10);
    }
    return true;
  }
}
