package dev.hamilock.examples.gang.run;

import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.examples.gang.input.DemoInput;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The bind test support's {@link InMemoryCluster} (hami-lock-bind-testkit): linearizable, no
 * network. Locks are {@link StoreNodeLock}s on the nodes' annotations (5 min lock timeout, dangling
 * owners detected through the cluster's pods), one set of lock instances per endpoint. Request
 * counts are the cluster's port operations named after the API request each would be.
 */
public final class InMemoryBackend implements DemoBackend {
  private static final Map<InMemoryCluster.Operation, String> VERBS =
      new EnumMap<>(
          Map.of(
              InMemoryCluster.Operation.READ_NODE, "get nodes",
              InMemoryCluster.Operation.READ_POD, "get pods",
              InMemoryCluster.Operation.LIST_ASSIGNED, "list pods",
              InMemoryCluster.Operation.LIST_ON_NODE, "list pods",
              InMemoryCluster.Operation.PATCH_POD, "patch pods",
              InMemoryCluster.Operation.BIND, "create pods/binding",
              InMemoryCluster.Operation.LOCK_READ, "get nodes",
              InMemoryCluster.Operation.LOCK_WRITE, "patch nodes"));

  private final InMemoryCluster cluster = InMemoryCluster.create();
  private final Map<InMemoryCluster.Operation, Long> base =
      new EnumMap<>(InMemoryCluster.Operation.class);

  @Override
  public String description() {
    return "in-process cluster (hami-lock-bind-testkit InMemoryCluster)";
  }

  @Override
  public void seed(DemoInput input) {
    input.nodes().forEach(n -> cluster.addNode(n.view()));
    input.pods().forEach(p -> cluster.addPod(p.view()));
  }

  @Override
  public Endpoint endpoint(String name, boolean waitsForLocks) {
    NodeLockProvider locks =
        NodeLockProvider.cached(
            key ->
                StoreNodeLock.create(
                    cluster.lockStore(),
                    LockSettings.builder()
                        .key(key)
                        .lockTimeout(Duration.ofMinutes(5))
                        .ownerLiveness(cluster.ownerLiveness())
                        .build()));
    return new Endpoint(name, cluster, cluster, locks, () -> {});
  }

  @Override
  public boolean simulatesDevicePlugins() {
    return true;
  }

  @Override
  public synchronized void resetCounters() {
    for (InMemoryCluster.Operation op : InMemoryCluster.Operation.values()) {
      base.put(op, cluster.operationCount(op));
    }
  }

  @Override
  public synchronized Map<String, Long> requestsByVerb() {
    Map<String, Long> out = new TreeMap<>();
    for (InMemoryCluster.Operation op : InMemoryCluster.Operation.values()) {
      long n = cluster.operationCount(op) - base.getOrDefault(op, 0L);
      if (n > 0) {
        out.merge(VERBS.get(op), n, Long::sum);
      }
    }
    return out;
  }

  @Override
  public List<ClusterPod> pods(DemoInput input) {
    Set<String> keys = input.pods().stream().map(p -> p.view().key()).collect(Collectors.toSet());
    return cluster.pods().stream().filter(p -> keys.contains(p.key())).toList();
  }

  @Override
  public List<NodeView> nodes(DemoInput input) {
    Set<String> names =
        input.nodes().stream().map(n -> n.view().name()).collect(Collectors.toSet());
    return cluster.nodes().stream().filter(n -> names.contains(n.name())).toList();
  }

  @Override
  public void close() {}
}
