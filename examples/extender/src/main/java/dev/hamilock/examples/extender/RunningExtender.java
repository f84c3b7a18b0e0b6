package dev.hamilock.examples.extender;

import dev.hamilock.bind.GpuPreemption;
import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.bind.cluster.WatchedPods;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.extender.ExtenderConfig;
import dev.hamilock.extender.ExtenderMetrics;
import dev.hamilock.extender.ExtenderPreemption;
import dev.hamilock.extender.ExtenderServer;
import dev.hamilock.extender.HamiExtender;
import dev.hamilock.extender.PodEvents;
import dev.hamilock.k8s.bind.KubernetesCluster;
import dev.hamilock.k8s.stack.KubernetesHamiStack;
import dev.hamilock.micrometer.MicrometerNodeLockListener;
import io.kubernetes.client.openapi.ApiClient;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.LoggerFactory;

/**
 * The scheduler extender wired on one {@link ApiClient} and serving:
 *
 * <ol>
 *   <li>{@link KubernetesHamiStack} from HAMi's flags ({@link HamiSchedulerFlags}: retry policy
 *       {@code --node-lock-retry-timeout}, 100 ms poll, bounded by {@code --extender-http-timeout};
 *       lock expiry {@code --node-lock-timeout}; the node and device policies): one node lock per
 *       vendor lock key ({@code hami.io/mutex.lock} for NVIDIA) with its release watch, and the
 *       bind flow, which {@code /bind} serves as is (no second binder);
 *   <li>{@link HamiExtender#create(dev.hamilock.bind.HamiFlows, ExtenderConfig)} over the stack's
 *       flows (the Filter and the bind flow with the flags' policies);
 *   <li>the filter reads candidates from a {@link WatchedCache} (node and pod informers; no API
 *       read per candidate), the bind flow reads fresh; bind serves only pods of {@code
 *       --scheduler-name} that ask for a managed device;
 *   <li>{@link ExtenderServer} on {@code --bind-address}:{@code --port}, {@code /readyz} ready once
 *       the node watch has listed the nodes and opened its stream and both informers have synced;
 *       {@code /metrics}: Prometheus text of a {@link PrometheusMeterRegistry} with the server's
 *       meters ({@link ExtenderMetrics}) and the lock's ({@link MicrometerNodeLockListener}).
 * </ol>
 *
 * API requests time out after 10 s, or half the extender HTTP timeout if that is shorter (a request
 * must end before kube-scheduler gives up on the call). Close it to stop serving and stop the
 * watches.
 */
public final class RunningExtender implements AutoCloseable {
  /**
   * How long the bind's re-fit waits for the pod watch (or the node informer) alone to reach its
   * allocation's (or lock's) version before it also lists (reads): while connected the watch is a
   * few ms behind the PATCH's answer, more when the process is short of CPU.
   */
  static final Duration WATCH_HEDGE = Duration.ofMillis(5);

  /** How long the re-fit's pod list waits for the pod watch in all, its LIST in flight. */
  static final Duration WATCH_WAIT = Duration.ofMillis(100);

  private final KubernetesHamiStack hami;
  private final HamiExtender extender;
  private final ExtenderServer server;
  private final WatchedCache cache;
  private final PrometheusMeterRegistry meters;
  private final ExecutorService worker; // --gpu-preemption's thread, else an idle executor
  private final AtomicBoolean closed = new AtomicBoolean();

  private RunningExtender(
      KubernetesHamiStack hami,
      HamiExtender extender,
      ExtenderServer server,
      WatchedCache cache,
      PrometheusMeterRegistry meters,
      ExecutorService worker) {
    this.hami = hami;
    this.extender = extender;
    this.server = server;
    this.cache = cache;
    this.meters = meters;
    this.worker = worker;
  }

  /**
   * As {@link #start(ExtenderConfig, ApiClient, ApiClient, VendorRegistry, boolean)} with the
   * informers on {@code apiClient} (which then must have no read timeout, as client-java's builders
   * make it), without GPU preemption.
   *
   * @param config the validated flags
   * @param apiClient the cluster
   * @param registry the device vendors
   * @return the running extender
   * @throws IOException if the listen address cannot be bound
   */
  public static RunningExtender start(
      ExtenderConfig config, ApiClient apiClient, VendorRegistry registry) throws IOException {
    return start(config, apiClient, apiClient, registry, false);
  }

  /**
   * Builds the stack and starts serving.
   *
   * @param config the validated flags
   * @param apiClient the cluster
   * @param registry the device vendors (e.g. {@link VendorRegistry#discover()})
   * @param gpuPreemption {@code --gpu-preemption}: a served pod that fits nowhere for GPU reasons
   *     may preempt ({@link HamiExtender#preempting}: one daemon thread plans, reserves and evicts
   *     through the Eviction API; needs {@code pods/eviction: create},
   *     examples/extender/deploy-gpu-preemption/)
   * @return the running extender
   * @throws IOException if the listen address cannot be bound (the watches are stopped again)
   * @throws IllegalArgumentException if the stack refuses the settings (the message names them)
   */
  public static RunningExtender start(
      ExtenderConfig config,
      ApiClient apiClient,
      ApiClient watchApiClient,
      VendorRegistry registry,
      boolean gpuPreemption)
      throws IOException {
    Objects.requireNonNull(watchApiClient, "watchApiClient");
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(apiClient, "apiClient");
    Objects.requireNonNull(registry, "registry");
    PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // HAMi's flags (retry and lock timeouts, node and GPU policies) through the one parser; the
    // request timeout follows from them (10 s, or half the extender HTTP timeout if shorter)
    HamiSchedulerFlags flags = config.schedulerFlags();
    // the one cluster of the flows: fresh reads, writes, and Warning Events on pods (lock wait
    // timed out, lock taken over, bind failed, ignored policy word), deduplicated and rate-limited
    KubernetesCluster cluster =
        KubernetesCluster.create(
            apiClient,
            flags.retryPolicy().requestTimeout(),
            KubernetesCluster.DEFAULT_MAX_ATTEMPTS);
    PodEvents podEvents = new PodEvents(cluster, java.time.Clock.systemUTC());
    NodeLockListener lockEvents =
        NodeLockListener.all(
            List.of(
                NodeLockListener.guarded(new MicrometerNodeLockListener(meters)),
                NodeLockListener.guarded(new LockLog()),
                NodeLockListener.guarded(podEvents)));
    // the Filter reads candidates from the informers, everything else fresh but the re-fit's pod
    // lists under the lock (from the pod watch once it provably holds them) and its DRA snapshot
    WatchedCache cache = new WatchedCache(apiClient, watchApiClient, cluster);
    KubernetesHamiStack hami =
        KubernetesHamiStack.builder(apiClient)
            .stack(
                s ->
                    s.registry(registry)
                        .ports(cache.bindReader(cluster, WATCH_HEDGE, WATCH_WAIT), podEvents)
                        .filterReader(cache))
            .schedulerFlags(flags)
            .listener(lockEvents) // lock events and the bind flow's lock waits
            .build();
    ExecutorService worker =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "hami-gpu-preemption");
              t.setDaemon(true);
              return t;
            });
    try {
      HamiExtender extender =
          HamiExtender.create(hami, config)
              .servingSchedulers(config.serving().schedulerNames(), cache)
              .recordingEvents(podEvents);
      if (gpuPreemption) {
        extender.preempting(
            new GpuPreemption(
                cluster,
                podEvents,
                flags.podFitter(registry),
                cache::all,
                cache::nodes,
                cache::unbound,
                worker,
                64,
                GpuPreemption.DEFAULT_HOLD,
                java.time.Clock.systemUTC()));
      }
      cache.start();
      ExtenderServer server =
          ExtenderServer.builder(config, extender)
              .ready(() -> cache.synced() && synced(hami))
              .metrics(new ExtenderMetrics(meters), meters::scrape)
              .preemption(new ExtenderPreemption(extender, cache, flags.podFitter(registry), cache))
              .start();
      return new RunningExtender(hami, extender, server, cache, meters, worker);
    } catch (IOException | RuntimeException e) {
      worker.shutdownNow();
      cache.close();
      hami.close();
      throw e;
    }
  }

  /** Structured lock log lines: node, holder, owner, attempt as SLF4J key-values. */
  static final class LockLog implements NodeLockListener {
    private static final org.slf4j.Logger LOG =
        org.slf4j.LoggerFactory.getLogger("dev.hamilock.examples.extender.locks");

    @Override
    public void contended(dev.hamilock.core.LockContentionException c) {
      LOG.atDebug()
          .addKeyValue("node", c.node())
          .addKeyValue("key", c.key())
          .addKeyValue(
              "holder", c.holder().flatMap(h -> h.owner()).map(Object::toString).orElse("unknown"))
          .log("waiting for node lock");
    }

    @Override
    public void takenOver(
        String node,
        String key,
        dev.hamilock.core.LockOwner owner,
        String previousValue,
        dev.hamilock.core.AcquireOutcome reason) {
      LOG.atInfo()
          .addKeyValue("node", node)
          .addKeyValue("key", key)
          .addKeyValue("owner", owner)
          .addKeyValue("reason", reason)
          .addKeyValue("previous", dev.hamilock.extender.CallerMessages.safe(previousValue))
          .log("node lock taken over");
    }

    @Override
    public void waited(
        String node,
        dev.hamilock.core.LockOwner owner,
        Duration waited,
        int attempts,
        boolean acquired) {
      LOG.atDebug()
          .addKeyValue("node", node)
          .addKeyValue("pod", owner)
          .addKeyValue("attempt", attempts)
          .addKeyValue("waitedMs", waited.toMillis())
          .addKeyValue("acquired", acquired)
          .log("lock wait ended");
    }
  }

  /**
   * @return whether the filter's node and pod caches and every lock key's node watch have synced
   *     (listed, stream opened): what {@code /readyz} answers
   */
  public boolean ready() {
    return cache.synced() && synced(hami);
  }

  /**
   * @return whether the Filter reads DRA objects from its informers ({@link
   *     WatchedCache#draWatched}); not part of {@link #ready}: without RBAC {@code watch} on them
   *     it never turns true, and the Filter lists them per request instead
   */
  boolean draWatched() {
    return cache.draWatched();
  }

  private static boolean synced(KubernetesHamiStack hami) {
    try {
      return hami.awaitReady(Duration.ZERO);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * @return the bound address (the actual port with {@code --port=0})
   */
  public InetSocketAddress address() {
    return server.address();
  }

  /**
   * @return the bound port
   */
  public int port() {
    return server.port();
  }

  /**
   * @return the hami-lock stack (its bind flow serves /bind; device-plugin hand-off)
   */
  public KubernetesHamiStack hami() {
    return hami;
  }

  /**
   * @return the Prometheus registry behind {@code /metrics}
   */
  public PrometheusMeterRegistry meters() {
    return meters;
  }

  /**
   * @return the filter and bind handlers behind the HTTP routes
   */
  public HamiExtender extender() {
    return extender;
  }

  /**
   * Stops serving (waiting up to 1 s for running exchanges), then the preemption worker
   * (interrupted, awaited up to 5 s: a plan in flight stops between its API calls), then the node
   * watch. Idempotent.
   */
  @Override
  public void close() {
    close(true);
  }

  /**
   * As {@link #close()}; with {@code stopInformers} false the filter's node and pod informers are
   * left running, for a JVM that is exiting: their threads end with the process, while client-java
   * 27's own stop ({@code SharedInformerFactory.stopAllRegisteredInformers}, which interrupts each
   * informer's {@code Controller#processLoop}) logs every informer's stop at ERROR with a stack
   * trace (kubernetes-client/java#656).
   */
  void close(boolean stopInformers) {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    WatchedPods pods = cache.watchedPods();
    LoggerFactory.getLogger(RunningExtender.class)
        .info(
            "re-fit pod lists under the lock: {} from the pod watch, {} listed (the watch had not"
                + " reached the allocation's version first)",
            pods.answered(),
            pods.fellBack());
    try {
      server.close();
    } finally {
      try {
        worker.shutdownNow();
        if (!worker.awaitTermination(5, TimeUnit.SECONDS)) {
          LoggerFactory.getLogger(RunningExtender.class)
              .warn("the GPU preemption worker did not stop within 5 s");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      try {
        if (stopInformers) {
          cache.close();
        }
      } finally {
        hami.close();
      }
    }
  }
}
