package dev.hamilock.benchmarks.convergence;

import static dev.hamilock.core.internal.Checks.checkArgument;

import com.fasterxml.jackson.databind.JsonNode;
import dev.hamilock.core.LockOwner;
import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.Latency;
import dev.hamilock.testkit.RequestKey;
import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Binding;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1ResourceRequirements;
import io.kubernetes.client.openapi.models.V1Status;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The gang-convergence harness: releases N gang members at once (a {@link CountDownLatch} opening,
 * as Coscheduling's Permit does) into the bind phase of each {@link Algorithm}, on one in-process
 * API server emulator, and measures the time until the last member is bound and handed off, plus
 * the API requests by verb.
 *
 * <p>Per member: acquire the node lock (the algorithm waits or re-queues as it does for gang
 * members), POST {@code pods/binding}, hand the pod to the node's simulated device plugin. The
 * plugin (one thread per node, as HAMi's plugin serialises {@code Allocate}) holds the lock for the
 * {@link HarnessSettings#hold() hold} (20 ms, the time of a real {@code Allocate}) and then
 * releases it by exact owner through the algorithm's own plugin-side release. The plugin is told
 * the pod in-process; its lookup of that pod ({@link Algorithm.Plugin#lookup}, HAMi's {@code
 * GetPendingPod}: GET the node and parse the lock owner), run at the start of the hold on its own
 * counted client, is reported apart as plugin lookup and left out of the run's counts, as every
 * algorithm's pod discovery is; the bind flow's pod GET and annotation patches are the same for
 * every algorithm and are not simulated. So the counts are lock traffic plus one binding per
 * member.
 *
 * <p>Each scheduler replica and the plugins are separate simulated processes (own {@code
 * ApiClient}, own algorithm state). Mutual exclusion is checked on every run.
 *
 * <p>Not thread-safe; one harness runs one suite.
 */
public final class ConvergenceHarness implements AutoCloseable {

  /** Namespace of the gang pods. */
  public static final String NAMESPACE = "default";

  /** Pod-group label value of the gang. */
  public static final String POD_GROUP = "gang-bench";

  /** Node used for the uncontended cost measurement. */
  public static final String COST_NODE = "cost-node";

  /**
   * F-17 (HAMi website k3s lab): a real compact JSON registration, so nodes look like HAMi nodes.
   */
  static final String REGISTRATION =
      "[{\"id\":\"GPU-3c4a3856-fbb4-1425-9679-aed25f4d2977\",\"count\":10,"
          + "\"devmem\":97887,\"devcore\":100,\"type\":\"NVIDIA RTX PRO 6000 Blackwell Server Edition\","
          + "\"mode\":\"hami-core\",\"health\":true,\"devicepairscore\":{}}]";

  private static final int MAX_NODES = 32;
  private static final int MAX_REPLICAS = 3;
  private static final int COST_ITERATIONS = 20;

  private final HarnessSettings settings;
  private final List<Algorithm> algorithms;
  private final PrintStream progress;
  private final KubeBackend emulator;
  private final boolean ownsBackend;
  private final List<ProcessContext> replicaContexts = new ArrayList<>();
  private final ProcessContext pluginContext;
  private final AtomicInteger podSerial = new AtomicInteger();
  private final RequestCounter lookupCounter = new RequestCounter();

  /**
   * Starts the emulator and creates the nodes.
   *
   * @param algorithms the algorithms, in report order
   * @param progress where to print one line per run (e.g. {@code System.err})
   * @throws IllegalArgumentException if {@code algorithms} is empty
   */
  public ConvergenceHarness(
      HarnessSettings settings, List<Algorithm> algorithms, PrintStream progress) {
    this(
        settings,
        algorithms,
        progress,
        ApiServerEmulator.builder().clientReadTimeout(Duration.ofSeconds(30)).start(),
        true);
  }

  /**
   * Runs on a given API server (e.g. the real kube-apiserver of {@code RealApiServer}), which the
   * caller closes. Scenarios with a latency need the emulator (it adds the latency).
   *
   * @param algorithms the algorithms, in report order
   * @param progress where to print one line per run
   * @param backend the API server to run on; fresh (no nodes of this harness yet)
   * @throws IllegalArgumentException if {@code algorithms} is empty, or a scenario has a latency
   *     and {@code backend} is not the emulator
   */
  public ConvergenceHarness(
      HarnessSettings settings,
      List<Algorithm> algorithms,
      PrintStream progress,
      KubeBackend backend) {
    this(settings, algorithms, progress, backend, false);
  }

  private ConvergenceHarness(
      HarnessSettings settings,
      List<Algorithm> algorithms,
      PrintStream progress,
      KubeBackend backend,
      boolean ownsBackend) {
    checkArgument(!algorithms.isEmpty(), "algorithms must not be empty");
    if (!(backend instanceof ApiServerEmulator)) {
      settings.scenarios().stream()
          .filter(s -> s.latencyMs() != 0)
          .findFirst()
          .ifPresent(
              s -> {
                throw new IllegalArgumentException(
                    "scenario "
                        + s.describe()
                        + " needs the emulator (it adds the "
                        + "latency); on "
                        + backend.kind()
                        + " run latency=0 scenarios only, e.g. --only latency=0");
              });
    }
    this.settings = settings;
    this.algorithms = List.copyOf(algorithms);
    this.progress = progress;
    this.emulator = backend;
    this.ownsBackend = ownsBackend;
    for (int i = 0; i < MAX_NODES; i++) {
      emulator.createNode(nodeName(i), nodeAnnotations());
    }
    emulator.createNode(COST_NODE, nodeAnnotations());
    for (int r = 0; r < MAX_REPLICAS; r++) {
      replicaContexts.add(context());
    }
    ProcessContext plugin = context();
    // the lookup client shares the plugin client's connection pool (one process, one pool), so
    // it never starts a run on a connection left idle while other algorithms ran
    ApiClient lookup = emulator.newApiClient(Duration.ofSeconds(30));
    lookup.setHttpClient(plugin.client().getHttpClient());
    this.pluginContext =
        new ProcessContext(
            emulator,
            plugin.client(),
            plugin.watchClient(),
            settings.backoffScale(),
            settings.retryTimeout(),
            lookupCounter.install(lookup));
  }

  private ProcessContext context() {
    ApiClient client = emulator.newApiClient(Duration.ofSeconds(30));
    return new ProcessContext(
        emulator,
        client,
        emulator.newApiClient(Duration.ZERO),
        settings.backoffScale(),
        settings.retryTimeout(),
        client);
  }

  private static Map<String, String> nodeAnnotations() {
    return Map.of(
        "hami.io/node-nvidia-register",
        REGISTRATION,
        "hami.io/node-handshake",
        "Reported 2026-11-29 10:00:00.000000000 +0000 UTC");
  }

  /**
   * @return the name of node {@code i}: {@code gpu-node-00}…
   */
  static String nodeName(int i) {
    return String.format("gpu-node-%02d", i);
  }

  /**
   * Warms up, measures the uncontended cost of each algorithm, then runs every scenario.
   *
   * @throws InterruptedException if interrupted
   * @throws Exception if an algorithm cannot start a replica or plugin
   */
  public ConvergenceResults run() throws Exception {
    List<UncontendedCost> costs = new ArrayList<>();
    for (Algorithm a : algorithms) {
      costs.add(uncontendedCost(a));
    }
    if (settings.warmupRequests() > 0) {
      for (Algorithm a : algorithms) {
        runScenario(a, new Scenario(8, 1, 0, 1), 1, false);
      }
    }
    List<ScenarioSummary> summaries = new ArrayList<>();
    for (Scenario s : settings.scenarios()) {
      for (Algorithm a : algorithms) {
        List<RunResult> runs = runScenario(a, s, settings.repetitions(), true);
        ScenarioSummary summary = ScenarioSummary.of(a, runs, settings.hold());
        summaries.add(summary);
        progress.printf(
            Locale.ROOT,
            "%-40s %-48s median %8.1f ms  p90 %8.1f ms  x%.2f LB  %.2f lock req/member%s%n",
            s.describe(),
            a.label(),
            summary.medianMs(),
            summary.p90Ms(),
            summary.ratioToLowerBound(),
            summary.lockRequestsPerMember(),
            summary.failedRuns() > 0 ? "  FAILED RUNS: " + summary.failedRuns() : "");
      }
    }
    return new ConvergenceResults(settings, costs, summaries);
  }

  // ------------------------------------------------------------------ uncontended cost

  private UncontendedCost uncontendedCost(Algorithm algorithm) throws Exception {
    setLatency(Latency.NONE);
    try (Algorithm.Replica replica = algorithm.replica(replicaContexts.get(0));
        Algorithm.Plugin plugin = algorithm.plugin(pluginContext)) {
      GangPod pod = createPods(1).get(0);
      emulator.resetCounters();
      // the counters are read every 20 cycles: on the real server each read is a /metrics scrape
      for (int cycle = 0;
          cycle % 20 != 0 || emulator.totalRequests() < settings.warmupRequests();
          cycle++) {
        replica.acquire(COST_NODE, pod);
        replica.release(COST_NODE, pod);
      }
      List<Double> acquire = new ArrayList<>();
      List<Double> release = new ArrayList<>();
      List<Double> pluginRelease = new ArrayList<>();
      Map<RequestKey, Long> acquireCounts = Map.of();
      Map<RequestKey, Long> releaseCounts = Map.of();
      Map<RequestKey, Long> pluginCounts = Map.of();
      for (int i = 0; i < COST_ITERATIONS; i++) {
        emulator.resetCounters();
        replica.acquire(COST_NODE, pod);
        acquireCounts = countsWithoutWatches();
        acquire.add((double) sum(acquireCounts));
        emulator.resetCounters();
        replica.release(COST_NODE, pod);
        releaseCounts = countsWithoutWatches();
        release.add((double) sum(releaseCounts));
        replica.acquire(COST_NODE, pod);
        Optional<String> observed = plugin.lookup(COST_NODE, pod);
        emulator.resetCounters();
        plugin.release(COST_NODE, pod, observed);
        pluginCounts = countsWithoutWatches();
        pluginRelease.add((double) sum(pluginCounts));
      }
      requireUnlocked(COST_NODE);
      deletePods(List.of(pod));
      UncontendedCost cost =
          new UncontendedCost(
              algorithm.key(),
              algorithm.label(),
              algorithm.ours(),
              Stats.median(acquire),
              Stats.median(release),
              Stats.median(pluginRelease),
              detail(acquireCounts),
              detail(releaseCounts),
              detail(pluginCounts));
      progress.printf(
          Locale.ROOT,
          "uncontended %-48s acquire %.0f (%s), release %.0f (%s), plugin release %.0f (%s)%n",
          algorithm.label(),
          cost.acquire(),
          cost.acquireDetail(),
          cost.releaseSameProcess(),
          cost.releaseDetail(),
          cost.releaseByPlugin(),
          cost.pluginDetail());
      return cost;
    }
  }

  private Map<RequestKey, Long> countsWithoutWatches() {
    Map<RequestKey, Long> out = new LinkedHashMap<>();
    emulator
        .requestCounts()
        .forEach(
            (k, v) -> {
              if (!k.verb().equals("watch")) {
                out.put(k, v);
              }
            });
    return out;
  }

  private static long sum(Map<RequestKey, Long> counts) {
    return counts.values().stream().mapToLong(Long::longValue).sum();
  }

  private static String detail(Map<RequestKey, Long> counts) {
    List<String> parts = new ArrayList<>();
    counts.forEach((k, v) -> parts.add(k + "=" + v));
    return String.join(", ", parts);
  }

  // ------------------------------------------------------------------ scenarios

  private List<RunResult> runScenario(
      Algorithm algorithm, Scenario scenario, int repetitions, boolean record) throws Exception {
    setLatency(
        scenario.latencyMs() == 0
            ? Latency.NONE
            : Latency.fixed(Duration.ofMillis(scenario.latencyMs())));
    evictIdleConnections();
    List<Algorithm.Replica> replicas = new ArrayList<>();
    List<Algorithm.Plugin> plugins = new ArrayList<>();
    List<ExecutorService> pluginThreads = new ArrayList<>();
    try {
      for (int r = 0; r < scenario.replicas(); r++) {
        replicas.add(algorithm.replica(replicaContexts.get(r)));
      }
      for (int n = 0; n < scenario.nodes(); n++) {
        plugins.add(algorithm.plugin(pluginContext));
        int node = n;
        pluginThreads.add(
            Executors.newSingleThreadExecutor(r -> daemon(r, "device-plugin-" + node)));
      }
      List<RunResult> runs = new ArrayList<>();
      for (int rep = 0; rep < repetitions; rep++) {
        RunResult r = runOnce(algorithm, scenario, replicas, plugins, pluginThreads);
        r.failure()
            .ifPresent(
                f ->
                    progress.println(
                        "FAILED RUN: " + scenario.describe() + " " + algorithm.key() + ": " + f));
        runs.add(r);
      }
      return runs;
    } finally {
      for (Algorithm.Replica r : replicas) {
        closeQuietly(r);
      }
      for (Algorithm.Plugin p : plugins) {
        closeQuietly(p);
      }
      pluginThreads.forEach(ExecutorService::shutdownNow);
      setLatency(Latency.NONE);
    }
  }

  /**
   * Closes every pooled connection before a scenario. The emulator's JDK HTTP server closes a
   * connection idle for 30 s, OkHttp keeps idle ones for 5 min and checks a GET's connection only
   * cheaply, and {@code hami-lock-k8s} sends without OkHttp's silent retry: a pool left idle while
   * the slow baselines ran (e.g. 60-125 s of fail-fast at N ≥ 16) made the first reads of the next
   * algorithm fail with "unexpected end of stream" (the 3 failed ours-watch runs of 2026-11-29
   * 20:44, reproduced with the lookup client's own pool). Each algorithm starts on fresh
   * connections instead.
   */
  private void evictIdleConnections() {
    List<ProcessContext> all = new ArrayList<>(replicaContexts);
    all.add(pluginContext);
    for (ProcessContext c : all) {
      c.client().getHttpClient().connectionPool().evictAll();
      c.watchClient().getHttpClient().connectionPool().evictAll();
      c.lookupClient().getHttpClient().connectionPool().evictAll();
    }
  }

  private RunResult runOnce(
      Algorithm algorithm,
      Scenario scenario,
      List<Algorithm.Replica> replicas,
      List<Algorithm.Plugin> plugins,
      List<ExecutorService> pluginThreads)
      throws InterruptedException {
    int n = scenario.gangSize();
    List<GangPod> pods = createPods(n);
    CountDownLatch go = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(n);
    long[] doneAt = new long[n];
    AtomicInteger bound = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    AtomicIntegerArray holders = new AtomicIntegerArray(scenario.nodes());
    AtomicReference<String> failure = new AtomicReference<>();
    AtomicReference<Throwable> cause = new AtomicReference<>();
    long holdNanos = settings.hold().toNanos();
    List<Thread> binders = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int member = i;
      int nodeIndex = i % scenario.nodes();
      String node = nodeName(nodeIndex);
      GangPod pod = pods.get(i);
      int replicaIndex = i % scenario.replicas();
      Algorithm.Replica replica = replicas.get(replicaIndex);
      ApiClient client = replicaContexts.get(replicaIndex).client();
      Algorithm.Plugin plugin = plugins.get(nodeIndex);
      Thread t =
          new Thread(
              () -> {
                boolean handedOff = false;
                try {
                  go.await();
                  replica.acquire(node, pod);
                  if (holders.incrementAndGet(nodeIndex) > 1) {
                    violations.incrementAndGet();
                  }
                  bind(client, pod, node);
                  bound.incrementAndGet();
                  pluginThreads
                      .get(nodeIndex)
                      .execute(
                          () -> {
                            try {
                              long holdEnd = System.nanoTime() + holdNanos;
                              Optional<String> observed = plugin.lookup(node, pod);
                              holdUntil(holdEnd);
                              holders.decrementAndGet(nodeIndex);
                              plugin.release(node, pod, observed);
                              doneAt[member] = System.nanoTime();
                            } catch (Exception e) {
                              if (failure.compareAndSet(
                                  null, pod.name() + " plugin release: " + describe(e))) {
                                cause.set(e);
                              }
                            } finally {
                              done.countDown();
                            }
                          });
                  handedOff = true;
                } catch (InterruptedException e) {
                  failure.compareAndSet(null, pod.name() + ": interrupted");
                } catch (Exception e) {
                  if (failure.compareAndSet(null, pod.name() + ": " + describe(e))) {
                    cause.set(e);
                  }
                } finally {
                  if (!handedOff) {
                    done.countDown();
                  }
                }
              },
              "binder-" + i);
      t.setDaemon(true);
      binders.add(t);
      t.start();
    }
    emulator.resetCounters();
    lookupCounter.reset();
    long start = System.nanoTime();
    go.countDown();
    boolean finished = done.await(settings.runTimeout().toMillis(), TimeUnit.MILLISECONDS);
    if (!finished) {
      failure.compareAndSet(
          null, "did not converge within " + settings.runTimeout().toSeconds() + " s");
      binders.forEach(Thread::interrupt);
    }
    for (Thread t : binders) {
      t.join(TimeUnit.SECONDS.toMillis(30));
    }
    long end = start;
    for (long d : doneAt) {
      end = Math.max(end, d);
    }
    Map<RequestKey, Long> lookups = lookupCounter.snapshot();
    Map<RequestKey, Long> all = emulator.requestCounts();
    RequestCounter.excess(all, lookups)
        .ifPresent(
            e ->
                progress.println(
                    "WARNING: "
                        + scenario.describe()
                        + " "
                        + algorithm.key()
                        + ": plugin lookup counter disagrees with the emulator ("
                        + e
                        + "); clamped at 0"));
    Map<RequestKey, Long> counts = RequestCounter.minus(all, lookups);
    for (int i = 0; i < scenario.nodes(); i++) {
      if (!requireUnlocked(nodeName(i))) {
        failure.compareAndSet(null, "lock left on " + nodeName(i) + " after the run");
      }
    }
    Throwable t = cause.get();
    if (t != null) {
      progress.println(
          "failure stack trace (" + scenario.describe() + " " + algorithm.key() + "):");
      t.printStackTrace(progress);
    }
    deletePods(pods);
    return new RunResult(
        scenario,
        algorithm.key(),
        end - start,
        bound.get(),
        counts,
        lookups,
        violations.get(),
        Optional.ofNullable(failure.get()));
  }

  /**
   * Sleeps precisely until {@code deadline} ({@link System#nanoTime()}; parkNanos overshoot only),
   * like a device plugin's Allocate of fixed length.
   */
  private static void holdUntil(long deadline) throws InterruptedException {
    long remaining;
    while ((remaining = deadline - System.nanoTime()) > 0) {
      LockSupport.parkNanos(remaining);
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
    }
  }

  private static void bind(ApiClient client, GangPod pod, String node) throws ApiException {
    V1Binding binding =
        new V1Binding()
            .metadata(new V1ObjectMeta().name(pod.name()).namespace(pod.namespace()))
            .target(new V1ObjectReference().apiVersion("v1").kind("Node").name(node));
    client.execute(
        new CoreV1Api(client)
            .createNamespacedPodBinding(pod.name(), pod.namespace(), binding)
            .buildCall(null),
        V1Status.class);
  }

  private List<GangPod> createPods(int n) {
    List<GangPod> pods = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String name = "gang-" + podSerial.incrementAndGet();
      Map<String, Object> container =
          Map.of(
              "name",
              "main",
              "image",
              "vllm",
              "resources",
              Map.of(
                  "limits",
                  Map.of(
                      "nvidia.com/gpu",
                      "1",
                      "nvidia.com/gpumem",
                      "3000",
                      "nvidia.com/gpucores",
                      "30")));
      JsonNode stored =
          emulator.create(
              Map.of(
                  "apiVersion",
                  "v1",
                  "kind",
                  "Pod",
                  "metadata",
                  Map.of(
                      "name",
                      name,
                      "namespace",
                      NAMESPACE,
                      "labels",
                      Map.of("scheduling.x-k8s.io/pod-group", POD_GROUP)),
                  "spec",
                  Map.of("schedulerName", "default-scheduler", "containers", List.of(container))));
      String uid = stored.path("metadata").path("uid").asText();
      V1Pod pod =
          new V1Pod()
              .apiVersion("v1")
              .kind("Pod")
              .metadata(
                  new V1ObjectMeta()
                      .name(name)
                      .namespace(NAMESPACE)
                      .uid(uid)
                      .labels(Map.of("scheduling.x-k8s.io/pod-group", POD_GROUP)))
              .spec(
                  new V1PodSpec()
                      .containers(
                          List.of(
                              new V1Container()
                                  .name("main")
                                  .image("vllm")
                                  .resources(
                                      new V1ResourceRequirements()
                                          .limits(
                                              Map.of(
                                                  "nvidia.com/gpu",
                                                  new Quantity("1"),
                                                  "nvidia.com/gpumem",
                                                  new Quantity("3000"),
                                                  "nvidia.com/gpucores",
                                                  new Quantity("30")))))));
      pods.add(new GangPod(pod, LockOwner.of(NAMESPACE, name, uid)));
    }
    return pods;
  }

  private void deletePods(List<GangPod> pods) {
    for (GangPod p : pods) {
      emulator.delete("pods", p.namespace(), p.name());
    }
  }

  /**
   * @return {@code true} if the node carried no lock; otherwise removes it and returns {@code
   *     false}
   */
  private boolean requireUnlocked(String node) {
    JsonNode annotations =
        emulator.get("nodes", null, node).orElseThrow().path("metadata").path("annotations");
    if (!annotations.has("hami.io/mutex.lock")) {
      return true;
    }
    emulator.mutate(
        "nodes",
        null,
        node,
        o -> {
          ((com.fasterxml.jackson.databind.node.ObjectNode) o.path("metadata").path("annotations"))
              .remove("hami.io/mutex.lock");
          return o;
        });
    return false;
  }

  private static String describe(Throwable e) {
    String m = e.getMessage();
    if (e instanceof ApiException api) {
      m = "HTTP " + api.getCode() + " " + api.getResponseBody();
    }
    return e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception e) {
      // closing a replica or plugin (stopping a watch) must not fail the suite
    }
  }

  private void setLatency(Latency latency) {
    if (emulator instanceof ApiServerEmulator e) {
      e.setLatency(latency);
    }
  }

  /** Stops the emulator (a backend given to the constructor is the caller's to close). */
  @Override
  public void close() {
    if (ownsBackend) {
      emulator.close();
    }
  }
}
