package dev.hamilock.bind.testing;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.bind.BindOutcome;
import dev.hamilock.bind.BindResult;
import dev.hamilock.bind.DevicePluginHandoff;
import dev.hamilock.bind.ExtenderFilter;
import dev.hamilock.bind.FilterDecision;
import dev.hamilock.bind.FlowFailure;
import dev.hamilock.bind.NodeLockProvider;
import dev.hamilock.bind.PodBinder;
import dev.hamilock.bind.cluster.ClusterException;
import dev.hamilock.bind.cluster.ClusterPod;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ForwardingCluster;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.HamiAnnotations;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.usage.NodeUsage;
import dev.hamilock.device.spi.usage.UsageReconstructor;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.device.spi.view.PodView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs one {@link Scenario} on a {@link ScenarioBackend}: creates nodes and unbound pods; each
 * scheduler replica snapshots usage before any bind, then runs on its own thread: {@link
 * ExtenderFilter} on its stale snapshot (updated with its own choices only, as HAMi's pod cache),
 * Filter annotations, {@link PodBinder}; each bound pod goes to its node's {@link
 * SimulatedDevicePlugin} ({@link DevicePluginHandoff} after its Allocate time, a stall moving the
 * shared {@link ScenarioClock} past the lock timeout); {@link OtherWriter} removes or takes over
 * locks as {@link Scenario.PodSpec#lockRemoval()} asks; after quiescence the state is {@link
 * BindInvariants#check checked} and {@linkplain BindInvariants#checkAudit audited}.
 *
 * <p>The {@link LockMode}s and {@link Builder} falsification switches turn one guard off each, to
 * show that the property then fails. Every wait is bounded ({@link Builder#runTimeout}).
 */
public final class ScenarioRunner {

  /** Which node locks binders and plugins use. */
  public enum LockMode {
    /** The backend's real locks. */
    REAL,
    /** {@link NoOpNodeLock}: no mutual exclusion, no hand-off through the lock. */
    NO_OP,
    /**
     * Real locks, but binders confirm a young lock from their own stamp ({@link
     * StampTrustingNodeLock}).
     */
    STAMP_TRUSTING_CONFIRMATION
  }

  private final VendorRegistry registry;
  private final LockMode lockMode;
  private final boolean refitUnderLock;
  private final double timeScale;
  private final RetryPolicy retryPolicy;
  private final ExecutorService executor;
  private final Duration runTimeout;
  private final Duration stallPause;
  private final Duration removalPause;
  private final Duration skewedHold;
  private final boolean sidecarsSeenAsInit;
  private final boolean bindPhaseHidden;

  private ScenarioRunner(Builder b) {
    this.bindPhaseHidden = b.bindPhaseHidden;
    this.removalPause = b.removalPause;
    this.skewedHold = b.skewedHold;
    this.sidecarsSeenAsInit = b.sidecarsSeenAsInit;
    this.stallPause = b.stallPause;
    this.registry = b.registry;
    this.lockMode = b.lockMode;
    this.refitUnderLock = b.refitUnderLock;
    this.timeScale = b.timeScale;
    this.retryPolicy = b.retryPolicy;
    this.executor = b.executor;
    this.runTimeout = b.runTimeout;
  }

  /**
   * @param registry vendors (must contain NVIDIA)
   * @return a builder: real locks, re-fit on, time scale 0.01, 2 ms polls with a 20 s gang retry
   *     timeout, a fresh thread per task, 60 s run timeout
   */
  public static Builder builder(VendorRegistry registry) {
    return new Builder(registry);
  }

  /**
   * @param backend a fresh backend (nothing created yet)
   * @return what happened, with the property's violations
   * @throws Exception if the backend failed to set up or report, a task crashed, or the run did not
   *     reach quiescence within the run timeout ({@link TimeoutException})
   */
  public RunReport run(Scenario scenario, ScenarioBackend backend) throws Exception {
    Objects.requireNonNull(scenario, "scenario");
    Objects.requireNonNull(backend, "backend");
    DeviceVendor nvidia =
        registry
            .vendor("NVIDIA")
            .orElseThrow(() -> new IllegalArgumentException("the registry has no NVIDIA vendor"));
    List<String> nodeNames = new ArrayList<>();
    for (Scenario.NodeSpec n : scenario.nodes()) {
      backend.createNode(n.toNodeView());
      nodeNames.add(n.name());
    }
    backend.setDra(scenario.draObjects());
    Map<String, PodView> created = new LinkedHashMap<>();
    Map<String, String> gangOf = scenario.gangOf();
    for (Scenario.PodSpec p : scenario.pods()) {
      PodView v = backend.createPod(p.toPodView(gangOf.get(p.name())));
      created.put(p.name(), v);
      backend.injectBindingFault(v.namespace(), v.name(), p.bindingFault());
    }

    ClusterReader schedulerReader =
        sidecarsSeenAsInit ? SidecarsAsInit.reader(backend.reader()) : backend.reader();
    ExtenderFilter filter =
        ExtenderFilter.builder(schedulerReader, registry).writer(backend.writer()).build();
    UsageReconstructor usage = new UsageReconstructor(registry);
    List<Map<String, NodeUsage>> snapshots = new ArrayList<>();
    for (int r = 0; r < scenario.replicas(); r++) {
      snapshots.add(new LinkedHashMap<>(filter.readUsage(nodeNames, Optional.empty())));
    }
    ScenarioClock clock = new ScenarioClock();
    NodeLockProvider binderLocks =
        switch (lockMode) {
          case REAL -> backend.locks(clock);
          case NO_OP -> NodeLockProvider.cached(NoOpNodeLock::new);
          case STAMP_TRUSTING_CONFIRMATION -> {
            NodeLockProvider real = backend.locks(clock);
            yield NodeLockProvider.cached(k -> new StampTrustingNodeLock(real.forKey(k), clock));
          }
        };
    String lockKey = nvidia.nodeLockKey().orElse(HamiAnnotations.MUTEX_LOCK);
    Map<String, Scenario.PodSpec> specs = new LinkedHashMap<>();
    scenario.pods().forEach(p -> specs.put(p.name(), p));
    NodeLockProvider pluginLocks =
        lockMode == LockMode.NO_OP
            ? NodeLockProvider.cached(NoOpNodeLock::new)
            : backend.locks(clock);
    Duration lockTimeout = pluginLocks.forKey(lockKey).lockTimeout();
    OtherWriter otherWriter =
        new OtherWriter(backend, lockKey, specs, removalPause, lockTimeout, skewedHold);
    PodBinder binder =
        PodBinder.builder(
                otherWriter.reader(
                    bindPhaseHidden ? bindPhaseHidden(schedulerReader) : schedulerReader),
                otherWriter.writer(),
                registry,
                binderLocks)
            .retryPolicy(retryPolicy)
            .refitUnderLock(refitUnderLock)
            .clock(clock) // bind times age with the locks: a stalled Allocate's too
            .build();

    PhysicalLedger ledger = new PhysicalLedger();
    Map<String, SimulatedDevicePlugin> plugins = new LinkedHashMap<>();
    Duration jump = lockTimeout.plusSeconds(1);
    SimulatedDevicePlugin.Stall stall =
        (ns, name) -> {
          for (int i = 0; i < 2; i++) {
            clock.jump(jump);
            Thread.sleep(stallPause.toMillis(), stallPause.toNanosPart() % 1_000_000);
          }
        };
    for (String n : nodeNames) {
      plugins.put(
          n,
          new SimulatedDevicePlugin(
              n,
              DevicePluginHandoff.create(
                  backend.reader(), backend.writer(), nvidia, pluginLocks.forKey(lockKey)),
              ledger,
              timeScale,
              stall));
    }

    ExecutorService pool = executor != null ? executor : daemonPool("scenario-runner");
    // odd replicas bind with bindAsync: lock attempts at a watched version, reads beside them
    ExecutorService steps = daemonPool("scenario-bind-steps");
    Map<String, BindResult> binds = new ConcurrentHashMap<>();
    Map<String, String> unschedulable = new ConcurrentHashMap<>();
    long deadline = System.nanoTime() + runTimeout.toNanos();
    try {
      List<Future<?>> pluginTasks = new ArrayList<>();
      for (SimulatedDevicePlugin p : plugins.values()) {
        pluginTasks.add(pool.submit(p));
      }
      CountDownLatch startGate = new CountDownLatch(1);
      List<Future<?>> replicaTasks = new ArrayList<>();
      for (int r = 0; r < scenario.replicas(); r++) {
        int replica = r;
        replicaTasks.add(
            pool.submit(
                () -> {
                  startGate.await();
                  Map<String, NodeUsage> snapshot = snapshots.get(replica);
                  for (Scenario.PodSpec spec : scenario.pods()) {
                    if (spec.replica() != replica) {
                      continue;
                    }
                    PodView pod =
                        sidecarsSeenAsInit
                            ? SidecarsAsInit.view(created.get(spec.name()))
                            : created.get(spec.name());
                    FilterDecision d = filter.decide(pod, snapshot.values());
                    if (d.node().isEmpty()) {
                      unschedulable.put(
                          spec.name(),
                          d.failure().map(FlowFailure::message).orElse(d.failedNodes().toString()));
                      continue;
                    }
                    String node = d.node().get();
                    try {
                      filter.annotate(pod, d);
                    } catch (ClusterException e) {
                      // the binder re-fits without the Filter's annotations
                    }
                    snapshot.put(
                        node,
                        snapshot
                            .get(node)
                            .plus(usage.podUsage(pod, node, d.devices().orElseThrow())));
                    BindResult b =
                        otherWriter.during(
                            spec,
                            () ->
                                replica % 2 == 0
                                    ? binder.bind(pod.namespace(), pod.name(), pod.uid(), node)
                                    : binder
                                        .bindAsync(
                                            pod.namespace(), pod.name(), pod.uid(), node, steps)
                                        .join());
                    binds.put(spec.name(), b);
                    if (b.outcome() == BindOutcome.BOUND) {
                      plugins
                          .get(node)
                          .admit(
                              pod.namespace(),
                              pod.name(),
                              spec.allocateDelayMicros(),
                              spec.pluginFails(),
                              spec.allocateStallsPastLockTimeout());
                    }
                  }
                  return null;
                }));
      }
      startGate.countDown();
      for (Future<?> f : replicaTasks) {
        await(f, deadline);
      }
      plugins.values().forEach(SimulatedDevicePlugin::shutdown);
      for (Future<?> f : pluginTasks) {
        await(f, deadline);
      }
    } finally {
      steps.shutdownNow();
      if (executor == null) {
        pool.shutdownNow();
      }
    }
    List<RunReport.SkewedTakeoverEvent> takeovers = otherWriter.takeovers(deadline);
    List<ClusterPod> finalPods = backend.pods();
    List<NodeView> finalNodes = backend.nodes();
    List<BindInvariants.Violation> violations =
        new ArrayList<>(BindInvariants.check(scenario, binds, ledger, finalPods, finalNodes));
    violations.addAll(BindInvariants.checkAudit(registry, violations, finalNodes, finalPods));
    violations.addAll(BindInvariants.checkTakeovers(takeovers, binds));
    return new RunReport(
        scenario,
        binds,
        unschedulable,
        ledger,
        finalPods,
        finalNodes,
        violations,
        otherWriter.removals(),
        takeovers);
  }

  /** {@code reader} whose usage reads show no pod's {@code hami.io/bind-phase}. */
  private static ClusterReader bindPhaseHidden(ClusterReader reader) {
    return new ForwardingCluster(reader, null) {
      @Override
      public List<ClusterPod> listPodsAssignedTo(String node) throws ClusterException {
        return super.listPodsAssignedTo(node).stream()
            .map(
                p -> {
                  Map<String, String> a = new LinkedHashMap<>(p.view().annotations());
                  a.remove(HamiAnnotations.BIND_PHASE);
                  return new ClusterPod(
                      p.view().toBuilder().annotations(a).build(),
                      p.nodeName(),
                      p.resourceVersion());
                })
            .toList();
      }
    };
  }

  private static void await(Future<?> f, long deadline) throws Exception {
    try {
      f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof Exception) {
        throw (Exception) c;
      }
      throw e;
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new TimeoutException("scenario did not reach quiescence within the run timeout");
    }
  }

  /** Builder for {@link ScenarioRunner}. Not thread-safe. */
  public static final class Builder {
    private final VendorRegistry registry;
    private LockMode lockMode = LockMode.REAL;
    private boolean refitUnderLock = true;
    private double timeScale = 0.01;
    private RetryPolicy retryPolicy =
        RetryPolicy.builder()
            .pollInterval(Duration.ofMillis(2))
            .retryTimeout(Duration.ofSeconds(20))
            .build();
    private ExecutorService executor;
    private Duration runTimeout = Duration.ofSeconds(60);
    private Duration stallPause = Duration.ofMillis(40);
    private Duration removalPause = Duration.ofMillis(5);
    private Duration skewedHold = Duration.ofMillis(20);
    private boolean sidecarsSeenAsInit;
    private boolean bindPhaseHidden;

    private Builder(VendorRegistry registry) {
      this.registry = Objects.requireNonNull(registry, "registry");
    }

    public Builder lockMode(LockMode mode) {
      this.lockMode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    public Builder refitUnderLock(boolean on) {
      this.refitUnderLock = on;
      return this;
    }

    /**
     * @param scale factor on Allocate times (0.01: 0–30 ms becomes 0–300 µs); &ge; 0
     */
    public Builder timeScale(double scale) {
      checkArgument(scale >= 0, "timeScale must not be negative: %s", scale);
      this.timeScale = scale;
      return this;
    }

    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * @param pool runs replicas and plugins (needs replicas + nodes threads at once); not shut down
     *     by the runner. Default: a fresh cached pool per run.
     */
    public Builder executor(ExecutorService pool) {
      this.executor = Objects.requireNonNull(pool, "pool");
      return this;
    }

    public Builder runTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "runTimeout");
      checkArgument(
          !timeout.isNegative() && !timeout.isZero(), "runTimeout must be positive: %s", timeout);
      this.runTimeout = timeout;
      return this;
    }

    /**
     * @param pause real time a stalled Allocate waits after each jump of the clock (default 40 ms:
     *     binders polling every few ms look at the lock in between); not negative
     */
    public Builder stallPause(Duration pause) {
      Objects.requireNonNull(pause, "stallPause");
      checkArgument(!pause.isNegative(), "stallPause must not be negative: %s", pause);
      this.stallPause = pause;
      return this;
    }

    /**
     * @param pause real time a binder waits after its lock was removed {@linkplain
     *     Scenario.LockRemoval#BEFORE_CONFIRMATION before its confirmation} (default 5 ms, so
     *     polling binders take the free lock); not negative
     */
    public Builder removalPause(Duration pause) {
      Objects.requireNonNull(pause, "removalPause");
      checkArgument(!pause.isNegative(), "removalPause must not be negative: %s", pause);
      this.removalPause = pause;
      return this;
    }

    /**
     * @param hold real time a {@link Scenario.LockRemoval#SKEWED_TAKEOVER} writer holds the lock
     *     (default 20 ms, so the binder that lost it confirms meanwhile); not negative
     */
    public Builder skewedHold(Duration hold) {
      Objects.requireNonNull(hold, "skewedHold");
      checkArgument(!hold.isNegative(), "skewedHold must not be negative: %s", hold);
      this.skewedHold = hold;
      return this;
    }

    /**
     * Falsification switch: filter and binders (not plugins nor checker) see every native sidecar
     * as a run-to-completion init container, counting it only at its init peak.
     */
    public Builder sidecarsSeenAsInit(boolean on) {
      this.sidecarsSeenAsInit = on;
      return this;
    }

    /**
     * Falsification switch: the binders' usage reads under the lock show no {@code
     * hami.io/bind-phase}, which turns their hand-off guard off.
     */
    public Builder bindPhaseHidden(boolean on) {
      this.bindPhaseHidden = on;
      return this;
    }

    public ScenarioRunner build() {
      return new ScenarioRunner(this);
    }
  }

  private static ExecutorService daemonPool(String name) {
    return Executors.newCachedThreadPool(
        r -> {
          Thread t = new Thread(r, name);
          t.setDaemon(true);
          return t;
        });
  }
}
