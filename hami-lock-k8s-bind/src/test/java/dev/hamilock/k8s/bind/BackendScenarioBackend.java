package dev.hamilock.k8s.bind;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.cluster.BindingPostResult;
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
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.device.spi.usage.DraObjects;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import dev.hamilock.fabric8.Fabric8LockStack;
import dev.hamilock.fabric8.bind.Fabric8Cluster;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.fixtures.BackendFixtures;
import dev.hamilock.k8s.fixtures.Fabric8Replicas;
import dev.hamilock.reference.HamiException;
import dev.hamilock.reference.HamiLockContentionException;
import dev.hamilock.reference.HamiLockValue;
import dev.hamilock.reference.HamiNodeLock;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.FaultRule;
import dev.hamilock.testkit.KubeBackend;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

/**
 * {@link ScenarioBackend} on a shared {@link KubeBackend} (the emulator or the real
 * kube-apiserver): one run's pods live in their own namespace (created here, not {@link
 * Scenario#NAMESPACE}; the runner and {@code BindInvariants} go by the stored pods' namespace and
 * by pod names), its nodes are the scenario's own (give each run uniquely named nodes, see {@link
 * #renameNodes}). Every thread (scheduler replica, simulated device plugin, set-up thread) gets its
 * own client stack, as separate processes would have: client-java's ({@code ApiClient}, {@link
 * KubernetesCluster}, {@link KubernetesLockStack}), fabric8's ({@link Fabric8Cluster}, {@link
 * Fabric8LockStack}) or, {@link Clients#MIXED}, the two alternating. Binding faults: on the
 * emulator they are its fault rules on that pod's Binding POST ({@code LOST} closes the connection
 * without executing, {@code APPLIED_BUT_TIMED_OUT} executes and drops the answer); the real server
 * cannot be told to lose a Binding, so there they are injected between the binder and its client at
 * the {@code ClusterWriter} port, with the same result the client would report: {@code LOST}
 * answers {@code AMBIGUOUS} without sending the POST, {@code APPLIED_BUT_TIMED_OUT} sends it (the
 * server binds) and then answers {@code AMBIGUOUS}; once per pod, as the emulator's rules.
 *
 * <p>{@link #onFreshEmulator()} is the single-run form: it starts its own emulator (closed with
 * this backend), keeps the pods in {@link Scenario#NAMESPACE}, and builds locks on the run's clock
 * ({@link #locks(java.time.InstantSource)}), so a stalled device plugin can outlive the lock
 * timeout (HAMi#3096); on a shared backend the run's clock is ignored (the interface's default).
 */
final class BackendScenarioBackend implements ScenarioBackend {
  private final KubeBackend k8s;
  private final String namespace;
  private final Set<String> nodeNames = ConcurrentHashMap.newKeySet();
  private final Map<Thread, Stack> stacks = new ConcurrentHashMap<>();
  private final RoutingCluster cluster = new RoutingCluster();
  private final Map<String, Scenario.BindingFault> clientFaults = new ConcurrentHashMap<>();

  /**
   * Set for {@link #onFreshEmulator()}: the emulator is this run's own and locks follow the run's
   * clock.
   */
  private final boolean ownsBackend;

  private final AtomicInteger stuckHolderContentions = new AtomicInteger();
  private final AtomicInteger skewedHolders = new AtomicInteger();

  /** HAMi's scheduler on a skewed clock: its own client, made on first use. */
  private final AtomicReference<ApiClient> skewedClient = new AtomicReference<>();

  /** The run's clock for locks created from now on (each thread's stack is built on first use). */
  private volatile InstantSource clock = Clock.systemUTC();

  /** Which client each thread's stack is on. */
  enum Clients {
    CLIENT_JAVA,
    FABRIC8,
    /** client-java and fabric8 stacks alternating in the order threads first use the cluster. */
    MIXED
  }

  private final Clients clients;

  /** Every thread's lock holders per node, as acquire and release report them. */
  private final Map<String, Set<LockOwner>> holders = new ConcurrentHashMap<>();

  private final AtomicInteger mostHolders = new AtomicInteger();

  /** One thread's client stack: its ports, its lock and what closing it takes. */
  private record Stack(
      ClusterReader reader, ClusterWriter writer, NodeLock lock, AutoCloseable closer) {}

  /**
   * @param k8s the backend (shared by runs)
   * @param namespace a namespace no other run uses (created here)
   */
  BackendScenarioBackend(KubeBackend k8s, String namespace) {
    this(k8s, namespace, false, Clients.CLIENT_JAVA);
  }

  /**
   * @param k8s the backend (shared by runs)
   * @param namespace a namespace no other run uses (created here)
   * @param clients the client of each thread's stack
   */
  BackendScenarioBackend(KubeBackend k8s, String namespace, Clients clients) {
    this(k8s, namespace, false, clients);
  }

  private BackendScenarioBackend(
      KubeBackend k8s, String namespace, boolean ownsBackend, Clients clients) {
    this.k8s = k8s;
    this.clients = clients;
    this.namespace = namespace;
    this.ownsBackend = ownsBackend;
    BackendFixtures.namespace(k8s, namespace);
  }

  /**
   * @return a backend on a newly started {@link ApiServerEmulator} (closed with the backend), pods
   *     in {@link Scenario#NAMESPACE}, locks on the run's clock
   */
  static BackendScenarioBackend onFreshEmulator() {
    return new BackendScenarioBackend(
        ApiServerEmulator.start(), Scenario.NAMESPACE, true, Clients.CLIENT_JAVA);
  }

  /**
   * @param scenario a generated scenario (nodes {@code node-0}, …)
   * @param prefix unique per run
   * @return the same scenario with nodes named {@code prefix-node-0}, … (GPUs, gangs unchanged)
   */
  static Scenario renameNodes(Scenario scenario, String prefix) {
    List<Scenario.NodeSpec> nodes = new ArrayList<>();
    for (Scenario.NodeSpec n : scenario.nodes()) {
      nodes.add(new Scenario.NodeSpec(prefix + "-" + n.name(), n.gpus()));
    }
    return new Scenario(nodes, scenario.gangs(), scenario.replicas());
  }

  private Stack mine() {
    return stacks.computeIfAbsent(
        Thread.currentThread(),
        t -> {
          NodeLockListener listener =
              new NodeLockListener() {
                @Override
                public void contended(LockContentionException contention) {
                  if (contention.getMessage().contains("HAMi#3096")) {
                    stuckHolderContentions.incrementAndGet();
                  }
                }
              };
          if (clients == Clients.FABRIC8 || (clients == Clients.MIXED && stacks.size() % 2 == 1)) {
            KubernetesClient client = Fabric8Replicas.client(k8s); // 5 s requests, no retries
            Fabric8Cluster cluster = Fabric8Cluster.create(client);
            Fabric8LockStack locks =
                Fabric8LockStack.builder(client)
                    .lockTimeout(Duration.ofMinutes(5))
                    .clock(clock)
                    .listener(listener)
                    .build();
            return new Stack(
                cluster,
                cluster,
                locks.nodeLock(),
                () -> {
                  locks.close();
                  client.close();
                });
          }
          ApiClient client = k8s.newApiClient(Duration.ofSeconds(10));
          ApiClient watchClient = k8s.newApiClient(Duration.ZERO);
          KubernetesCluster cluster =
              KubernetesCluster.create(
                  client, Duration.ofSeconds(5), KubernetesCluster.DEFAULT_MAX_ATTEMPTS);
          KubernetesLockStack locks =
              KubernetesLockStack.builder(client)
                  .watchApiClient(watchClient)
                  .requestTimeout(Duration.ofSeconds(5))
                  .lockTimeout(Duration.ofMinutes(5))
                  .clock(clock)
                  .listener(listener)
                  .build();
          return new Stack(
              cluster,
              cluster,
              locks.nodeLock(),
              () -> {
                locks.close();
                for (ApiClient c : List.of(client, watchClient)) {
                  c.getHttpClient().connectionPool().evictAll(); // the shared server outlives us
                }
              });
        });
  }

  /**
   * @return the most owners this run's stacks held one node's lock for at once, as their acquire
   *     and release calls report it (a lock taken over from an expired or dangling holder counts
   *     both)
   */
  int mostHoldersAtOnce() {
    return mostHolders.get();
  }

  /**
   * @return client stacks created so far (one per thread that used the cluster)
   */
  int stacks() {
    return stacks.size();
  }

  /**
   * @return how often an expired lock was kept because its holder may still be allocating
   *     (HAMi#3096)
   */
  int stuckHolderContentions() {
    return stuckHolderContentions.get();
  }

  @Override
  public ClusterReader reader() {
    return cluster;
  }

  @Override
  public ClusterWriter writer() {
    return cluster;
  }

  @Override
  public NodeLockProvider locks(InstantSource runClock) {
    if (ownsBackend) {
      this.clock = runClock;
    }
    return locks();
  }

  @Override
  public NodeLockProvider locks() {
    return key -> {
      if (!key.equals(NodeLock.DEFAULT_KEY)) {
        throw new IllegalArgumentException(
            "this backend locks only " + NodeLock.DEFAULT_KEY + ", not " + key);
      }
      return new RoutingLock();
    };
  }

  @Override
  public void createNode(NodeView node) {
    EmulatorObjects.createNode(k8s, node);
    nodeNames.add(node.name());
  }

  @Override
  public PodView createPod(PodView pod) {
    return EmulatorObjects.pod(EmulatorObjects.createPod(k8s, pod, namespace)).view();
  }

  @Override
  public boolean injectBindingFault(String ns, String name, Scenario.BindingFault fault) {
    if (fault == Scenario.BindingFault.NONE) {
      return true;
    }
    if (fault == Scenario.BindingFault.LANDS_LATE) {
      return false; // in memory only (InMemoryScenarioBackend); LateBindingOverHttpTest over HTTP
    }
    if (!(k8s instanceof ApiServerEmulator emulator)) {
      clientFaults.put(ns + "/" + name, fault);
      return true;
    }
    FaultRule.Builder rule =
        FaultRule.matching()
            .verb("create")
            .resource("pods/binding")
            .pathMatching(Pattern.quote("/api/v1/namespaces/" + ns + "/pods/" + name + "/binding"))
            .times(1);
    emulator.addFault(
        fault == Scenario.BindingFault.LOST
            ? rule.closeConnection()
            : rule.dropResponseAfterApply());
    return true;
  }

  /** {@inheritDoc} Here: an unconditional update of the node without the annotation. */
  @Override
  public Optional<String> removeLockAsAnotherWriter(String node, String key) {
    List<String> removed = new ArrayList<>();
    k8s.mutate(
        "nodes",
        null,
        node,
        n -> {
          if (n.path("metadata").path("annotations")
              instanceof com.fasterxml.jackson.databind.node.ObjectNode annotations) {
            Optional.ofNullable(annotations.remove(key))
                .map(JsonNode::asText)
                .ifPresent(removed::add);
          }
          return n;
        });
    return removed.stream().findFirst();
  }

  /**
   * {@inheritDoc} Here: {@code hami-reference}'s {@link HamiNodeLock} (HAMi's {@code LockNode}) on
   * a clock fixed at this backend's time plus {@code skew}, for a new pod {@code hami-skewed-N} of
   * this run's namespace, with its own API client (another process). The value it writes is known
   * before it writes it: HAMi stamps {@code time.Now()} in RFC 3339 seconds.
   */
  @Override
  public LockTakeover takeOverLockWithSkewedClock(
      String node, String key, Duration lockTimeout, Duration skew) throws Exception {
    requireHamiKey(node, key);
    String holder = "hami-skewed-" + skewedHolders.incrementAndGet();
    createPod(
        PodView.builder(namespace, holder)
            .containers(List.of(new ContainerView("main", "pause", Map.of(), Map.of())))
            .build());
    Instant skewedNow = clock.instant().plus(skew);
    HamiNodeLock hami =
        skewedWriter()
            .lockExpiry(lockTimeout)
            .clock(Clock.fixed(skewedNow, ZoneOffset.UTC))
            .build();
    Optional<String> replaced = lockValue(node, key);
    try {
      hami.lockNode(node, namespace, holder);
    } catch (HamiException e) {
      if (!HamiLockContentionException.isContention(e)) {
        throw e;
      }
      return new LockTakeover(node, holder, replaced, Optional.empty());
    }
    return new LockTakeover(
        node,
        holder,
        replaced,
        Optional.of(HamiLockValue.format(skewedNow, ZoneOffset.UTC, namespace, holder)));
  }

  /**
   * {@inheritDoc} Here: HAMi's {@code ReleaseNodeLock} with its owner check ({@link HamiNodeLock}).
   */
  @Override
  public Optional<String> releaseSkewedLock(LockTakeover takeover) throws Exception {
    Optional<String> seen = lockValue(takeover.node(), NodeLock.DEFAULT_KEY);
    skewedWriter().build().releaseNodeLock(takeover.node(), namespace, takeover.holder(), false);
    return seen;
  }

  private static void requireHamiKey(String node, String key) {
    if (!key.equals(NodeLock.DEFAULT_KEY)) {
      throw new IllegalArgumentException(
          "HAMi's scheduler locks only " + NodeLock.DEFAULT_KEY + ", not " + key + " on " + node);
    }
  }

  /**
   * HAMi's lock on the skewed writer's client, its retry backoff (100 ms doubling, 5 steps) scaled
   * by 1/20 as the runner scales Allocate times: a conflicting PATCH is retried as HAMi does, in
   * milliseconds.
   */
  private HamiNodeLock.Builder skewedWriter() {
    return HamiNodeLock.builder(skewedClient())
        .sleeper(d -> Thread.sleep(Math.max(1, d.toMillis() / 20)));
  }

  private ApiClient skewedClient() {
    return skewedClient.updateAndGet(c -> c != null ? c : k8s.newApiClient(Duration.ofSeconds(10)));
  }

  private Optional<String> lockValue(String node, String key) {
    return k8s.get("nodes", null, node)
        .map(n -> n.path("metadata").path("annotations").path(key))
        .filter(JsonNode::isTextual)
        .map(JsonNode::asText);
  }

  @Override
  public List<ClusterPod> pods() {
    List<ClusterPod> out = new ArrayList<>();
    for (JsonNode n : k8s.list("pods", namespace)) {
      out.add(EmulatorObjects.pod(n));
    }
    return out;
  }

  @Override
  public List<NodeView> nodes() {
    List<NodeView> out = new ArrayList<>();
    for (String name : nodeNames) {
      k8s.get("nodes", null, name).ifPresent(n -> out.add(EmulatorObjects.node(n)));
    }
    return out;
  }

  @Override
  public void close() {
    stacks
        .values()
        .forEach(
            s -> {
              try {
                s.closer().close();
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    stacks.clear();
    Optional.ofNullable(skewedClient.get())
        .ifPresent(c -> c.getHttpClient().connectionPool().evictAll());
    if (ownsBackend) {
      k8s.close();
    }
  }

  /** The calling thread's ports ({@link KubernetesCluster} or {@link Fabric8Cluster}). */
  private final class RoutingCluster implements ClusterReader, ClusterWriter {
    @Override
    public Optional<NodeView> readNode(String name) throws ClusterException {
      return mine().reader().readNode(name);
    }

    @Override
    public Optional<ClusterPod> readPod(String ns, String name) throws ClusterException {
      return mine().reader().readPod(ns, name);
    }

    @Override
    public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
      return mine().reader().listPodsAssignedTo(node);
    }

    @Override
    public List<ClusterPod> listPodsOnNode(String node) throws ClusterException {
      return mine().reader().listPodsOnNode(node);
    }

    @Override
    public DraObjects readDra(Collection<String> nodes) throws ClusterException {
      return mine().reader().readDra(nodes);
    }

    @Override
    public ClusterPod patchPodMetadata(String ns, String name, MetadataPatch patch)
        throws ClusterException {
      return mine().writer().patchPodMetadata(ns, name, patch);
    }

    @Override
    public BindingPostResult bind(String ns, String name, String uid, String rv, String node) {
      Scenario.BindingFault fault = clientFaults.remove(ns + "/" + name);
      if (fault == Scenario.BindingFault.LOST) {
        return BindingPostResult.ambiguous(
            "injected: the Binding POST of " + ns + "/" + name + " got no answer (not sent)");
      }
      BindingPostResult out = mine().writer().bind(ns, name, uid, rv, node);
      if (fault == Scenario.BindingFault.APPLIED_BUT_TIMED_OUT) {
        return BindingPostResult.ambiguous(
            "injected: the Binding POST of "
                + ns
                + "/"
                + name
                + " got no answer (server said "
                + out.kind()
                + ")");
      }
      return out;
    }
  }

  /**
   * The calling thread's {@code hami.io/mutex.lock}; a lock's confirmation and release go to the
   * stack that acquired it, as in one process (a {@code bindAsync} confirms its lock on another
   * thread of its executor).
   */
  private final class RoutingLock implements NodeLock {
    private final Map<String, NodeLock> acquiredBy = new ConcurrentHashMap<>();

    private NodeLock lock() {
      return mine().lock();
    }

    private NodeLock lockOf(String node, LockOwner owner) {
      return acquiredBy.getOrDefault(node + "/" + owner.namespace() + "/" + owner.name(), lock());
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
    public AcquireOutcome acquire(String node, LockOwner owner)
        throws LockContentionException, LockBackendException {
      NodeLock mine = lock();
      AcquireOutcome out = mine.acquire(node, owner);
      acquiredBy.put(node + "/" + owner.namespace() + "/" + owner.name(), mine);
      Set<LockOwner> now = holders.computeIfAbsent(node, n -> ConcurrentHashMap.newKeySet());
      now.add(owner);
      mostHolders.accumulateAndGet(now.size(), Math::max);
      return out;
    }

    @Override
    public boolean release(String node, LockOwner owner) throws LockBackendException {
      holders.getOrDefault(node, Set.of()).remove(owner); // before the lock is free
      return lockOf(node, owner).release(node, owner);
    }

    @Override
    public boolean stillHeld(String node, LockOwner owner) throws LockBackendException {
      return lockOf(node, owner).stillHeld(node, owner);
    }

    @Override
    public Optional<LockRecord> read(String node)
        throws MalformedLockException, LockBackendException {
      return lock().read(node);
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return lock().releaseSignal();
    }
  }
}
