package dev.hamilock.examples.gang.run;

import static com.google.common.base.Preconditions.checkArgument;

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
import dev.hamilock.bind.testing.BindInvariants;
import dev.hamilock.bind.testing.PhysicalLedger;
import dev.hamilock.bind.testing.Scenario;
import dev.hamilock.bind.testing.SimulatedDevicePlugin;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.codec.DeviceAnnotationException;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceInfo;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.view.NodeView;
import dev.hamilock.examples.gang.DemoOptions;
import dev.hamilock.examples.gang.input.DemoInput;
import dev.hamilock.examples.gang.input.DemoInput.PodEntry;
import dev.hamilock.examples.gang.input.DemoInput.PodGroupEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs the input's pods through the library's bind flow once, under one strategy:
 *
 * <ol>
 *   <li>every pod is scheduled by replica {@code i mod K}: each replica has its own endpoint (API
 *       client, node-lock instances), its own {@link ExtenderFilter} (fresh reads, HAMi's Filter
 *       annotations written) and its own {@link PodBinder}, whose acquire calls each hold a waiter
 *       handle in the fair per-node wake-up queue of the endpoint's locks; a replica's scheduling
 *       cycles (Filter) run one at a time, its binding cycles concurrently, as kube-scheduler's do;
 *   <li>gang members wait at Coscheduling's Permit: a latch per PodGroup opened when {@code
 *       minMember} members have passed the Filter, which releases every waiting member into its
 *       bind at the same instant (time zero); pods that are not members bind straight away;
 *   <li>{@link DemoOptions.Mode#GANG}: the binder's gang-aware retry (members wait for the node
 *       lock up to the retry timeout); {@link DemoOptions.Mode#FAIL_FAST}: {@link
 *       RetryPolicy#failFast()}, a contended pod fails and is re-queued with kube-scheduler's
 *       backoff (1 s doubling up to 10 s, scaled by {@link Settings#backoffScale}) and scheduled
 *       again (Filter, then Bind);
 *   <li>a bound pod is admitted to its node's {@link SimulatedDevicePlugin} (one per node and
 *       vendor, each with its own endpoint), which performs the {@link DevicePluginHandoff} after
 *       the Allocate time and releases the node lock;
 *   <li>after quiescence the final state is checked with the bind module's {@link BindInvariants}
 *       over the plugins' {@link PhysicalLedger}: no overlapping slices, consistent pods, no lock
 *       left.
 * </ol>
 */
public final class GangRun {
  /** kube-scheduler's {@code podInitialBackoffSeconds}. */
  static final Duration INITIAL_BACKOFF = Duration.ofSeconds(1);

  /** kube-scheduler's {@code podMaxBackoffSeconds}. */
  static final Duration MAX_BACKOFF = Duration.ofSeconds(10);

  /**
   * How to run.
   *
   * @param replicas scheduler replicas, &ge; 1
   * @param allocateMs simulated Allocate time, ms
   * @param gangPolicy the gang-mode retry policy (poll interval, retry timeout)
   * @param backoffScale factor on the re-queue backoff, (0, 1]
   * @param maxBinds bind calls per pod before giving up, &ge; 1
   */
  public record Settings(
      int replicas, int allocateMs, RetryPolicy gangPolicy, double backoffScale, int maxBinds) {
    /** Validates. */
    public Settings {
      Objects.requireNonNull(gangPolicy, "gangPolicy");
      checkArgument(
          replicas >= 1
              && allocateMs >= 0
              && backoffScale > 0
              && backoffScale <= 1
              && maxBinds >= 1,
          "invalid settings: replicas %s, allocateMs %s, backoffScale %s, maxBinds %s",
          replicas,
          allocateMs,
          backoffScale,
          maxBinds);
    }

    /**
     * @return an upper bound on one run: every pod re-queued maxBinds times plus the lock waits
     */
    Duration runTimeout() {
      long backoffs = 0;
      Duration b = INITIAL_BACKOFF;
      for (int i = 0; i < maxBinds; i++) {
        backoffs += b.toMillis();
        b = b.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : b.multipliedBy(2);
      }
      return Duration.ofMillis((long) (backoffs * backoffScale))
          .plus(gangPolicy.retryTimeout().multipliedBy(maxBinds))
          .plusSeconds(30);
    }
  }

  private final VendorRegistry registry;
  private final Settings settings;

  /**
   * @param registry the vendors
   * @param settings how to run
   */
  public GangRun(VendorRegistry registry, Settings settings) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.settings = Objects.requireNonNull(settings, "settings");
  }

  /**
   * @return the vendors
   */
  public VendorRegistry registry() {
    return registry;
  }

  /**
   * Seeds a fresh backend and runs.
   *
   * @param input the validated input
   * @param mode {@link DemoOptions.Mode#GANG} or {@link DemoOptions.Mode#FAIL_FAST}
   * @param backend a fresh backend (closed by the caller)
   * @return what happened
   * @throws Exception if the backend failed outside the bind flow (seeding, endpoints, final reads)
   *     or the run did not reach quiescence ({@link TimeoutException})
   */
  public ModeResult run(DemoInput input, DemoOptions.Mode mode, DemoBackend backend)
      throws Exception {
    checkArgument(mode != DemoOptions.Mode.BOTH, "run one mode at a time: %s", mode);
    backend.seed(input);
    backend.resetCounters();
    RetryPolicy policy =
        mode == DemoOptions.Mode.GANG ? settings.gangPolicy : RetryPolicy.failFast();
    long origin = System.nanoTime();
    LockTimeline timeline = new LockTimeline(origin);
    List<Endpoint> endpoints = new ArrayList<>();
    ExecutorService pool =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "gang-demo");
              t.setDaemon(true);
              return t;
            });
    try {
      List<String> nodeNames = input.nodes().stream().map(n -> n.view().name()).toList();
      List<Replica> replicas = new ArrayList<>();
      for (int r = 0; r < settings.replicas; r++) {
        Endpoint e = backend.endpoint("replica-" + r, mode == DemoOptions.Mode.GANG);
        endpoints.add(e);
        NodeLockProvider locks = timeline.wrap(e.locks(), e.name());
        replicas.add(
            new Replica(
                r,
                e,
                ExtenderFilter.builder(e.reader(), registry).writeAnnotations(e.writer()).build(),
                e.podBinder(registry, locks).retryPolicy(policy).build()));
      }
      PhysicalLedger ledger = new PhysicalLedger();
      Map<String, SimulatedDevicePlugin> plugins = new LinkedHashMap<>();
      List<Future<?>> pluginTasks = new ArrayList<>();
      if (backend.simulatesDevicePlugins()) {
        for (String n : nodeNames) {
          for (DeviceVendor v : registry.vendors()) {
            if (v.nodeLockKey().isEmpty()) {
              continue;
            }
            Endpoint e = backend.endpoint("device-plugin/" + n + "/" + v.commonWord(), false);
            endpoints.add(e);
            NodeLockProvider locks = timeline.wrap(e.locks(), e.name());
            SimulatedDevicePlugin p =
                new SimulatedDevicePlugin(
                    n,
                    DevicePluginHandoff.create(
                        e.reader(), e.writer(), v, locks.forKey(v.nodeLockKey().get())),
                    ledger,
                    1.0,
                    (podNamespace, podName) -> {});
            plugins.put(n + "|" + v.commonWord(), p);
            pluginTasks.add(pool.submit(p));
          }
        }
      }
      Map<String, Permit> permits = new LinkedHashMap<>();
      for (PodGroupEntry g : input.podGroups()) {
        permits.put(g.namespace() + "/" + g.name(), new Permit(Math.max(1, g.minMember())));
      }
      Map<String, BindResult> lastBinds = new ConcurrentHashMap<>();
      AtomicReference<Double> firstFilterMs = new AtomicReference<>();
      long deadline = System.nanoTime() + settings.runTimeout().toNanos();
      List<Future<MemberResult>> members = new ArrayList<>();
      for (int i = 0; i < input.pods().size(); i++) {
        PodEntry p = input.pods().get(i);
        Replica rep = replicas.get(i % replicas.size());
        Permit permit =
            p.podGroupLabel().map(g -> permits.get(p.view().namespace() + "/" + g)).orElse(null);
        members.add(
            pool.submit(
                () ->
                    member(
                        p,
                        rep,
                        permit,
                        nodeNames,
                        timeline,
                        plugins,
                        lastBinds,
                        firstFilterMs,
                        deadline)));
      }
      List<MemberResult> results = new ArrayList<>();
      for (Future<MemberResult> f : members) {
        results.add(await(f, deadline));
      }
      plugins.values().forEach(SimulatedDevicePlugin::shutdown);
      for (Future<?> f : pluginTasks) {
        await(f, deadline);
      }
      Map<String, Long> requests = backend.requestsByVerb();

      // time zero: the (first) Permit release, or without a gang the first Filter; every time
      // reported is rebased
      // onto it, so that the pods' bound/allocated times, the lock holds and the totals share one
      // origin
      Optional<Double> released =
          permits.values().stream()
              .map(p -> p.releasedMs.get())
              .filter(Objects::nonNull)
              .min(Double::compare);
      Optional<Double> filtered = Optional.ofNullable(firstFilterMs.get());
      String zeroName =
          released.isPresent()
              ? ModeResult.PERMIT_RELEASE
              : filtered.isPresent() ? ModeResult.FIRST_FILTER : ModeResult.RUN_START;
      double t0 = released.or(() -> filtered).orElse(0.0);
      List<LockTimeline.Hold> holds = timeline.holds().stream().map(h -> h.shiftedBy(-t0)).toList();
      List<MemberResult> withAllocation = new ArrayList<>();
      for (MemberResult m : results) {
        Optional<Double> allocated =
            backend.simulatesDevicePlugins() && m.bound()
                ? holds.stream()
                    .filter(
                        h -> h.pod().equals(m.pod()) && h.releasedBy().startsWith("device-plugin/"))
                    .map(h -> h.releasedMs().orElse(Double.NaN))
                    .max(Double::compare)
                : Optional.empty();
        withAllocation.add(
            new MemberResult(
                m.pod(),
                m.gangMember(),
                m.replica(),
                m.node(),
                m.gpuUuids(),
                m.memoryMiB(),
                m.cores(),
                m.lockWaitMs(),
                m.lockAttempts(),
                m.binds(),
                m.result(),
                m.reason(),
                m.boundMs().map(b -> b - t0),
                allocated));
      }
      Optional<Double> toBound =
          withAllocation.stream().allMatch(MemberResult::bound)
              ? withAllocation.stream().map(m -> m.boundMs().get()).max(Double::compare)
              : Optional.empty();
      Optional<Double> toAllocated =
          withAllocation.stream().allMatch(m -> m.allocatedMs().isPresent())
              ? withAllocation.stream().map(m -> m.allocatedMs().get()).max(Double::compare)
              : Optional.empty();

      List<NodeView> finalNodes = backend.nodes(input);
      List<ClusterPod> finalPods = backend.pods(input);
      List<String> violations =
          backend.simulatesDevicePlugins()
              ? violations(input, lastBinds, ledger, finalPods, finalNodes)
              : List.of();
      // on a real cluster the locks of bound pods stay held until HAMi's device plugin serves them
      List<String> locksLeft = backend.simulatesDevicePlugins() ? locksLeft(finalNodes) : List.of();
      return new ModeResult(
          mode,
          backend.description(),
          settings.replicas,
          withAllocation,
          zeroName,
          toBound,
          toAllocated,
          requests,
          violations,
          locksLeft,
          holds,
          timeline.contendedAttempts());
    } finally {
      pool.shutdownNow();
      for (Endpoint e : endpoints) {
        try {
          e.closer().close();
        } catch (Exception ignored) {
          // best effort: the backend is closed next
        }
      }
    }
  }

  private MemberResult member(
      PodEntry p,
      Replica rep,
      Permit permit,
      List<String> nodeNames,
      LockTimeline timeline,
      Map<String, SimulatedDevicePlugin> plugins,
      Map<String, BindResult> lastBinds,
      AtomicReference<Double> firstFilterMs,
      long deadline)
      throws Exception {
    String ns = p.view().namespace();
    String name = p.view().name();
    boolean member = permit != null;
    double lockWait = 0;
    int attempts = 0;
    int binds = 0;
    String node = "";
    String result = "UNSCHEDULABLE";
    String reason = "";
    BindResult last = null;
    Optional<Double> boundMs = Optional.empty();
    boolean passedPermit = false;
    Duration backoff = scale(INITIAL_BACKOFF);
    for (int tries = 1; tries <= settings.maxBinds; tries++) {
      if (tries > 1) {
        sleep(backoff, deadline);
        backoff =
            backoff.multipliedBy(2).compareTo(scale(MAX_BACKOFF)) > 0
                ? scale(MAX_BACKOFF)
                : backoff.multipliedBy(2);
      }
      ClusterPod cp;
      try {
        Optional<ClusterPod> read = rep.endpoint.reader().readPod(ns, name);
        if (read.isEmpty()) {
          result = BindOutcome.POD_NOT_FOUND.name();
          reason = "pod " + ns + "/" + name + " not found";
          break;
        }
        cp = read.get();
      } catch (ClusterException e) {
        reason = "cannot read the pod: " + e.getMessage();
        continue;
      }
      FilterDecision d;
      synchronized (rep) { // one scheduling cycle at a time per replica
        double now = timeline.nowMs();
        firstFilterMs.accumulateAndGet(now, (a, b) -> a == null ? b : Math.min(a, b));
        d = rep.filter.filter(cp.view(), nodeNames);
      }
      if (d.failure().filter(f -> f.kind() == FlowFailure.Kind.INVALID_REQUEST).isPresent()) {
        result = BindOutcome.INVALID_POD.name();
        reason = d.failure().get().message();
        break;
      }
      if (d.failure().isPresent()) {
        reason = "Filter failed: " + d.failure().get().message();
        continue;
      }
      if (d.devicesRequested() && d.node().isEmpty()) {
        result = "UNSCHEDULABLE";
        reason = "no node fits: " + d.failedNodes();
        continue;
      }
      node =
          d.node()
              .orElseGet(
                  () -> d.passedNodes().isEmpty() ? nodeNames.get(0) : d.passedNodes().get(0));
      if (!passedPermit && permit != null) {
        if (!permit.arriveAndAwait(timeline, deadline)) {
          result = "PERMIT_TIMEOUT";
          reason = "the PodGroup did not reach quorum before the run's deadline";
          break;
        }
      }
      passedPermit = true;
      BindResult b = rep.binder.bind(ns, name, cp.view().uid(), node);
      last = b;
      lastBinds.put(name, b);
      binds++;
      lockWait += b.timings().lockWait().toNanos() / 1e6;
      attempts += b.lockAttempts();
      result = b.outcome().name();
      reason = b.reason();
      if (b.isBound()) {
        boundMs = Optional.of(timeline.nowMs());
        for (String vendor : b.devices().map(PodDevices::byVendor).orElse(Map.of()).keySet()) {
          SimulatedDevicePlugin plugin = plugins.get(node + "|" + vendor);
          if (plugin != null
              && b.devices().get().forVendor(vendor).stream().anyMatch(c -> !c.isEmpty())) {
            plugin.admit(ns, name, settings.allocateMs * 1000, false, false);
          }
        }
        break;
      }
      if (b.outcome() == BindOutcome.ALREADY_BOUND
          || b.outcome() == BindOutcome.POD_NOT_FOUND
          || b.outcome() == BindOutcome.INVALID_POD
          || b.outcome() == BindOutcome.UNKNOWN) {
        break;
      }
    }
    List<String> uuids = new ArrayList<>();
    int mem = 0;
    int cores = 0;
    if (last != null && last.devices().isPresent()) {
      for (List<List<ContainerDevice>> containers : last.devices().get().byVendor().values()) {
        for (List<ContainerDevice> c : containers) {
          for (ContainerDevice dev : c) {
            uuids.add(dev.uuid());
            mem += dev.usedmem();
            cores += dev.usedcores();
          }
        }
      }
    }
    return new MemberResult(
        ns + "/" + name,
        member,
        rep.index,
        node,
        uuids,
        mem,
        cores,
        lockWait,
        attempts,
        binds,
        result,
        reason,
        boundMs,
        Optional.empty());
  }

  private Duration scale(Duration d) {
    return Duration.ofNanos((long) (d.toNanos() * settings.backoffScale));
  }

  private static void sleep(Duration d, long deadline)
      throws InterruptedException, TimeoutException {
    long nanos = Math.min(d.toNanos(), deadline - System.nanoTime());
    if (nanos <= 0) {
      throw new TimeoutException("the run did not finish before its deadline");
    }
    TimeUnit.NANOSECONDS.sleep(nanos);
  }

  private List<String> violations(
      DemoInput input,
      Map<String, BindResult> binds,
      PhysicalLedger ledger,
      List<ClusterPod> pods,
      List<NodeView> nodes) {
    Optional<DeviceVendor> nvidia = registry.vendor("NVIDIA");
    if (nvidia.isEmpty()) {
      return List.of();
    }
    List<Scenario.NodeSpec> specs = new ArrayList<>();
    for (NodeView n : nodes) {
      List<Scenario.GpuSpec> gpus = new ArrayList<>();
      try {
        for (DeviceInfo d : nvidia.get().decodeNodeDevices(n)) {
          gpus.add(new Scenario.GpuSpec(d.id(), d.devmem(), d.type()));
        }
      } catch (DeviceAnnotationException e) {
        continue; // the Filter reported this node unusable; nothing can be allocated on it
      }
      if (!gpus.isEmpty()) {
        specs.add(new Scenario.NodeSpec(n.name(), gpus));
      }
    }
    // only pods that were given NVIDIA devices (or stayed unbound) are the checker's business
    List<ClusterPod> checked =
        pods.stream()
            .filter(
                p ->
                    !p.isBound()
                        || Optional.ofNullable(binds.get(p.view().name()))
                            .flatMap(BindResult::devices)
                            .map(d -> d.forVendor("NVIDIA").stream().anyMatch(c -> !c.isEmpty()))
                            .orElse(false))
            .toList();
    if (specs.isEmpty() || checked.isEmpty()) {
      return List.of();
    }
    List<Scenario.PodSpec> podSpecs =
        checked.stream()
            .map(
                p ->
                    new Scenario.PodSpec(
                        p.view().name(), 1, 0, 0, 0, 0, 0, false, Scenario.BindingFault.NONE))
            .toList();
    Scenario scenario = new Scenario(specs, List.of(new Scenario.GangSpec("demo", podSpecs)), 1);
    return BindInvariants.check(scenario, binds, ledger, checked, nodes).stream()
        .map(v -> v.kind() + ": " + v.detail())
        .toList();
  }

  private List<String> locksLeft(List<NodeView> nodes) {
    Set<String> keys = new TreeSet<>();
    registry.vendors().forEach(v -> v.nodeLockKey().ifPresent(keys::add));
    List<String> out = new ArrayList<>();
    for (NodeView n : nodes) {
      for (String k : keys) {
        String v = n.annotations().get(k);
        if (v != null) {
          out.add(n.name() + ": " + k + "=" + v);
        }
      }
    }
    return out;
  }

  private static <T> T await(Future<T> f, long deadline) throws Exception {
    try {
      return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception c) {
        throw c;
      }
      throw e;
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new TimeoutException("the run did not reach quiescence before its deadline");
    }
  }

  /** One scheduler replica. */
  private static final class Replica {
    final int index;
    final Endpoint endpoint;
    final ExtenderFilter filter;
    final PodBinder binder;

    Replica(int index, Endpoint endpoint, ExtenderFilter filter, PodBinder binder) {
      this.index = index;
      this.endpoint = endpoint;
      this.filter = filter;
      this.binder = binder;
    }
  }

  /** Coscheduling's Permit for one PodGroup: opens for everyone once minMember members wait. */
  private static final class Permit {
    final CountDownLatch latch;
    final AtomicReference<Double> releasedMs = new AtomicReference<>();

    Permit(int minMember) {
      this.latch = new CountDownLatch(minMember);
    }

    boolean arriveAndAwait(LockTimeline timeline, long deadline) throws InterruptedException {
      synchronized (this) {
        if (latch.getCount()
            == 1) { // this arrival opens the latch: record the instant before anyone is released
          releasedMs.compareAndSet(null, timeline.nowMs());
        }
        latch.countDown();
      }
      return latch.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }
  }
}
