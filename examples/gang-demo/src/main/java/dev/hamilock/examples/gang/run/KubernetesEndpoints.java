package dev.hamilock.examples.gang.run;

import static com.google.common.base.Preconditions.checkArgument;

import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.core.store.LockBackend;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.LockStackSettings;
import dev.hamilock.k8s.bind.KubernetesCluster;
import dev.hamilock.k8s.watch.NodeLockWatch;
import io.kubernetes.client.openapi.ApiClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A replica's endpoint on client-java, assembled from parts because the demo builds its own bind
 * flow per replica (with its lock timeline around the locks): the {@link KubernetesCluster} ports
 * and one {@link KubernetesLockStack} per vendor lock key, all served by one node watch (as the
 * whole stack does: one watch per client for every key). A scheduler that needs no such wrapping
 * uses {@code KubernetesHamiStack} and its {@code podBinder()} instead.
 */
final class KubernetesEndpoints {
  private KubernetesEndpoints() {}

  static Endpoint of(
      String name,
      ApiClient client,
      ApiClient watchClient,
      VendorRegistry registry,
      boolean watch) {
    KubernetesCluster cluster = KubernetesCluster.create(client);
    Map<String, KubernetesLockStack> stacks = new TreeMap<>();
    NodeLockWatch shared = null;
    if (watch) {
      NodeLockWatch.Builder wb = NodeLockWatch.builder(client);
      if (watchClient != null) {
        wb.watchApiClient(watchClient);
      }
      shared = wb.build();
    }
    // one node watch per client serves every lock key (issue 16 item 8)
    LockBackend backend =
        shared == null
            ? null
            : KubernetesLockStack.nodeAnnotationBackend(
                client, LockStackSettings.defaults(), Optional.of(shared));
    try {
      for (String key : lockKeys(registry)) {
        stacks.put(
            key,
            KubernetesLockStack.builder(client).key(key).watch(watch).backend(backend).build());
      }
      if (shared != null) {
        shared.start();
      }
    } catch (RuntimeException e) {
      stacks.values().forEach(KubernetesLockStack::close);
      if (shared != null) {
        shared.close();
      }
      throw e;
    }
    NodeLockWatch nodeWatch = shared;
    NodeLockProvider locks =
        key -> {
          KubernetesLockStack l = stacks.get(key);
          checkArgument(
              l != null,
              "no node lock for key \"%s\"; this endpoint locks %s",
              key,
              stacks.keySet());
          return l.nodeLock();
        };
    return new Endpoint(
        name,
        cluster,
        cluster,
        locks,
        () -> {
          stacks.values().forEach(KubernetesLockStack::close);
          if (nodeWatch != null) {
            nodeWatch.close();
          }
        });
  }

  private static List<String> lockKeys(VendorRegistry registry) {
    List<String> keys = new ArrayList<>();
    registry
        .vendors()
        .forEach(v -> v.nodeLockKey().filter(k -> !keys.contains(k)).ifPresent(keys::add));
    checkArgument(
        !keys.isEmpty(),
        "registry must contain a vendor with a node lock key: %s",
        registry.vendors());
    return keys;
  }
}
