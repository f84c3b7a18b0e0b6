package dev.hamilock.examples.gang.run;

import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.bind.KubernetesCluster;
import io.kubernetes.client.openapi.ApiClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A replica's endpoint on client-java, assembled from parts because the demo builds its own bind
 * flow per replica (with its lock timeline around the locks): the {@link KubernetesCluster} ports
 * and one {@link KubernetesLockStack} per vendor lock key. A scheduler that needs no such wrapping
 * uses {@code KubernetesHamiStack} and its {@code podBinder()} instead.
 */
final class KubernetesEndpoints {
  private KubernetesEndpoints() {}

  static Endpoint of(String name, ApiClient client, ApiClient watchClient, VendorRegistry registry, boolean watch) {
    KubernetesCluster cluster = KubernetesCluster.create(client);
    Map<String, KubernetesLockStack> stacks = new TreeMap<>();
    try {
      for (String key : lockKeys(registry)) {
        KubernetesLockStack.Builder b = KubernetesLockStack.builder(client).key(key).watch(watch);
        if (watchClient != null) {
          b.watchApiClient(watchClient);
        }
        stacks.put(key, b.build());
      }
    } catch (RuntimeException e) {
      stacks.values().forEach(KubernetesLockStack::close);
      throw e;
    }
    NodeLockProvider locks = key -> {
      KubernetesLockStack l = stacks.get(key);
      if (l == null) {
        throw new IllegalArgumentException("no node lock for key \"" + key + "\"; this endpoint locks " + stacks.keySet());
      }
      return l.nodeLock();
    };
    NodeLockListener queues = NodeLockListener.all(stacks.values().stream().map(KubernetesLockStack::queueListener).toList());
    return new Endpoint(name, cluster, cluster, locks, queues, () -> stacks.values().forEach(KubernetesLockStack::close));
  }

  private static List<String> lockKeys(VendorRegistry registry) {
    List<String> keys = new ArrayList<>();
    registry.vendors().forEach(v -> v.nodeLockKey().filter(k -> !keys.contains(k)).ifPresent(keys::add));
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("registry must contain a vendor with a node lock key");
    }
    return keys;
  }
}
