package dev.hamilock.bind.testing;

import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.cluster.BindingPostResult;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * {@link ScenarioBackend} over an {@link InMemoryCluster}: locks are {@link StoreNodeLock}s on the
 * cluster's node annotations (5 min lock timeout, dangling owners detected through the cluster's
 * pods), binding faults are injected with the cluster's fault hook; a {@link
 * Scenario.BindingFault#LANDS_LATE} Binding is held, answered as timed out, and applied as it was
 * sent right before the next Binding POST of any pod.
 */
public final class InMemoryScenarioBackend implements ScenarioBackend {
  private final InMemoryCluster cluster;
  private final Map<String, Scenario.BindingFault> bindingFaults = new ConcurrentHashMap<>();
  private volatile boolean pre3096;
  private volatile boolean servingDra = true;

  /** The {@link Scenario.BindingFault#LANDS_LATE} Bindings not applied yet. */
  private final List<Runnable> late = new CopyOnWriteArrayList<>();

  private final ClusterWriter writer;

  /** Creates a backend over a fresh cluster (no latency). */
  public InMemoryScenarioBackend() {
    this(InMemoryCluster.builder());
  }

  /**
   * @param builder a cluster builder (e.g. with latency); its fault injector is replaced
   */
  public InMemoryScenarioBackend(InMemoryCluster.Builder builder) {
    this.cluster =
        builder
            .faults(
                (op, target) -> {
                  if (op != InMemoryCluster.Operation.BIND) {
                    return InMemoryCluster.Fault.NONE;
                  }
                  Scenario.BindingFault f = bindingFaults.remove(target);
                  if (f == null) {
                    return InMemoryCluster.Fault.NONE;
                  }
                  return f == Scenario.BindingFault.LOST
                      ? InMemoryCluster.Fault.FAIL_BEFORE
                      : InMemoryCluster.Fault.FAIL_AFTER;
                })
            .build();
    this.writer =
        new ForwardingCluster(null, cluster) {
          @Override
          public BindingPostResult bind(
              String namespace, String name, String uid, String resourceVersion, String node) {
            String key = namespace + "/" + name;
            if (bindingFaults.remove(key, Scenario.BindingFault.LANDS_LATE)) {
              late.add(() -> cluster.bind(namespace, name, uid, resourceVersion, node));
              return BindingPostResult.ambiguous(
                  "injected: the Binding POST of " + key + " timed out (applied later)");
            }
            for (Runnable r : late) {
              if (late.remove(r)) {
                r.run();
              }
            }
            return super.bind(namespace, name, uid, resourceVersion, node);
          }
        };
  }

  /**
   * @param on whether {@link #setDra} reaches the cluster (default true); false makes every fit
   *     ignore the ResourceClaims the scenario's truth counts (a falsification)
   */
  public InMemoryScenarioBackend servingDra(boolean on) {
    this.servingDra = on;
    return this;
  }

  @Override
  public void setDra(DraObjects dra) {
    if (servingDra) {
      cluster.setDra(dra);
    }
  }

  public InMemoryCluster cluster() {
    return cluster;
  }

  @Override
  public ClusterReader reader() {
    return cluster;
  }

  @Override
  public ClusterWriter writer() {
    return writer;
  }

  @Override
  public NodeLockProvider locks() {
    return locks(Clock.systemUTC());
  }

  @Override
  public NodeLockProvider locks(InstantSource clock) {
    OwnerLiveness detailed = cluster.ownerLiveness();
    // state-only liveness: the pre-HAMi#3096 rule (expiry alone transfers), for falsification runs
    OwnerLiveness liveness = pre3096 ? owner -> detailed.check(owner) : detailed;
    return NodeLockProvider.cached(
        key ->
            StoreNodeLock.create(
                cluster.lockStore(),
                LockSettings.builder()
                    .key(key)
                    .lockTimeout(Duration.ofMinutes(5))
                    .ownerLiveness(liveness)
                    .clock(clock)
                    .build()));
  }

  /**
   * Falsification switch: the locks get an owner liveness that reports only alive/gone, not the
   * holder's node, phase and bind-phase, so an expired lock is taken over even while its holder may
   * still be allocated (HAMi#3096's behaviour). The property must then fail on stalled-plugin
   * scenarios.
   */
  public InMemoryScenarioBackend withPre3096Takeover() {
    this.pre3096 = true;
    return this;
  }

  @Override
  public void createNode(NodeView node) {
    cluster.addNode(node);
  }

  @Override
  public PodView createPod(PodView pod) {
    return cluster.addPod(pod).view();
  }

  @Override
  public boolean injectBindingFault(String namespace, String name, Scenario.BindingFault fault) {
    if (fault != Scenario.BindingFault.NONE) {
      bindingFaults.put(namespace + "/" + name, fault);
    }
    return true;
  }

  /** {@inheritDoc} Here: a read and a compare-and-delete of that value on the cluster's store. */
  @Override
  public Optional<String> removeLockAsAnotherWriter(String node, String key) throws Exception {
    Optional<String> value = cluster.lockStore().read(node, key);
    if (value.isPresent() && !cluster.lockStore().deleteIfEquals(node, key, value.get())) {
      throw new IllegalStateException("lock " + key + " on " + node + " changed while removed");
    }
    return value;
  }

  @Override
  public List<ClusterPod> pods() {
    return cluster.pods();
  }

  @Override
  public List<NodeView> nodes() {
    return cluster.nodes();
  }
}
