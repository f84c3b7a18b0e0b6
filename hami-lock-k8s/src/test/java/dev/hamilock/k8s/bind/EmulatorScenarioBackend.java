package dev.hamilock.k8s.bind;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.NodeLocks;
import dev.hamilock.bind.cluster.BindingOutcome;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.bind.cluster.MetadataPatch;
import dev.hamilock.bind.testing.Scenario;
import dev.hamilock.bind.testing.ScenarioBackend;
import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.MalformedLockException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.k8s.KubernetesNodeLocks;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * {@link ScenarioBackend} on a fresh {@link ApiServerEmulator} over HTTP: every thread of the run
 * (each scheduler replica, each simulated device plugin, the set-up thread) gets its own client
 * stack — its own {@link ApiClient} (connection pool), {@link KubernetesCluster} and
 * {@link KubernetesNodeLocks} (store, pod-liveness check, release watch) — as separate processes
 * would have. Binding faults are emulator fault rules on that pod's {@code pods/binding} POST:
 * {@code LOST} closes the connection without executing, {@code APPLIED_BUT_TIMED_OUT} executes and
 * drops the answer.
 */
final class EmulatorScenarioBackend implements ScenarioBackend {
  private final ApiServerEmulator k8s;
  private final Map<Thread, Stack> stacks = new ConcurrentHashMap<>();
  private final ClusterReader reader = new RoutingCluster();
  private final RoutingCluster writer = (RoutingCluster) reader;

  /** One client process: its own client, ports and locks. */
  private record Stack(ApiClient client, KubernetesCluster cluster, KubernetesNodeLocks locks) {}

  EmulatorScenarioBackend() {
    this.k8s = ApiServerEmulator.start();
  }

  ApiServerEmulator emulator() {
    return k8s;
  }

  /** @return the number of client stacks created so far (one per thread that used the cluster) */
  int stacks() {
    return stacks.size();
  }

  private Stack mine() {
    return stacks.computeIfAbsent(Thread.currentThread(), t -> {
      ApiClient client = k8s.newApiClient(Duration.ofSeconds(10));
      return new Stack(client, KubernetesCluster.builder(client).requestTimeout(Duration.ofSeconds(5)).build(),
          KubernetesNodeLocks.builder(client).requestTimeout(Duration.ofSeconds(5)).lockTimeout(Duration.ofMinutes(5))
              .clock(clock).listener(new dev.hamilock.core.NodeLockListener() {
                @Override
                public void contended(LockContentionException contention) {
                  if (contention.getMessage().contains("HAMi#3096")) {
                    stuckHolderContentions.incrementAndGet();
                  }
                }
              }).build());
    });
  }

  @Override
  public ClusterReader reader() {
    return reader;
  }

  @Override
  public ClusterWriter writer() {
    return writer;
  }

  private final java.util.concurrent.atomic.AtomicInteger stuckHolderContentions =
      new java.util.concurrent.atomic.AtomicInteger();

  /** @return how often an expired lock was kept because its holder may still be allocated (HAMi#3096) */
  int stuckHolderContentions() {
    return stuckHolderContentions.get();
  }

  /** The run's clock for locks created from now on (each thread's stack is built on first use). */
  private volatile java.time.InstantSource clock = java.time.Clock.systemUTC();

  @Override
  public NodeLocks locks(java.time.InstantSource clock) {
    this.clock = clock;
    return locks();
  }

  @Override
  public NodeLocks locks() {
    return key -> {
      if (!key.equals(NodeLock.DEFAULT_KEY)) {
        throw new IllegalArgumentException("this backend locks only " + NodeLock.DEFAULT_KEY + ", not " + key);
      }
      return new RoutingLock();
    };
  }

  @Override
  public void createNode(NodeView node) {
    EmulatorObjects.createNode(k8s, node);
  }

  @Override
  public PodView createPod(PodView pod) {
    return EmulatorObjects.pod(EmulatorObjects.createPod(k8s, pod)).view();
  }

  @Override
  public boolean injectBindingFault(String namespace, String name, Scenario.BindingFault fault) {
    if (fault == Scenario.BindingFault.NONE) {
      return true;
    }
    FaultRule.Builder rule = FaultRule.matching().verb("create").resource("pods/binding")
        .pathMatching(Pattern.quote("/api/v1/namespaces/" + namespace + "/pods/" + name + "/binding")).times(1);
    k8s.addFault(fault == Scenario.BindingFault.LOST ? rule.closeConnection() : rule.dropResponseAfterApply());
    return true;
  }

  @Override
  public List<ClusterPod> pods() {
    List<ClusterPod> out = new ArrayList<>();
    for (JsonNode n : k8s.list("pods", Scenario.NAMESPACE)) {
      out.add(EmulatorObjects.pod(n));
    }
    return out;
  }

  @Override
  public List<NodeView> nodes() {
    List<NodeView> out = new ArrayList<>();
    for (JsonNode n : k8s.list("nodes", null)) {
      out.add(EmulatorObjects.node(n));
    }
    return out;
  }

  @Override
  public void close() {
    stacks.values().forEach(s -> s.locks().close());
    k8s.close();
  }

  /** The calling thread's {@link KubernetesCluster}. */
  private final class RoutingCluster implements ClusterReader, ClusterWriter {
    @Override
    public Optional<NodeView> readNode(String name) throws ClusterException {
      return mine().cluster().readNode(name);
    }

    @Override
    public Optional<ClusterPod> readPod(String namespace, String name) throws ClusterException {
      return mine().cluster().readPod(namespace, name);
    }

    @Override
    public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
      return mine().cluster().listPodsAssignedTo(node);
    }

    @Override
    public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
      return mine().cluster().listPodsOnNode(node);
    }

    @Override
    public ClusterPod patchPodMetadata(String namespace, String name, MetadataPatch patch) throws ClusterException {
      return mine().cluster().patchPodMetadata(namespace, name, patch);
    }

    @Override
    public BindingOutcome bind(String namespace, String name, String uid, String node) {
      return mine().cluster().bind(namespace, name, uid, node);
    }
  }

  /** The calling thread's {@code hami.io/mutex.lock}. */
  private final class RoutingLock implements NodeLock {
    private NodeLock lock() {
      return mine().locks().nodeLock();
    }

    @Override
    public String key() {
      return NodeLock.DEFAULT_KEY;
    }

    @Override
    public Duration lockTimeout() {
      return lock().lockTimeout();
    }

    @Override
    public AcquireOutcome acquire(String node, LockOwner owner) throws LockContentionException, LockBackendException {
      return lock().acquire(node, owner);
    }

    @Override
    public boolean release(String node, LockOwner owner) throws LockBackendException {
      return lock().release(node, owner);
    }

    @Override
    public boolean stillHeld(String node, LockOwner owner) throws LockBackendException {
      return lock().stillHeld(node, owner);
    }

    @Override
    public Optional<LockRecord> read(String node) throws MalformedLockException, LockBackendException {
      return lock().read(node);
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return lock().releaseSignal();
    }
  }
}
