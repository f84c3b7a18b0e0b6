package dev.hamilock.k8s.stack;

import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.bind.HamiStack;
import dev.hamilock.bind.cluster.ClusterReader;
import dev.hamilock.bind.cluster.ClusterWriter;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.store.LockBackend;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.fit.PodFitter;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.LockStackSettings;
import dev.hamilock.k8s.bind.KubernetesCluster;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.Objects;

/**
 * The whole hami-lock stack for one {@link ApiClient}, wired once from one {@link
 * LockStackSettings}, exposing HAMi's flows — not its parts — as client-java's {@code
 * LeaderElector} exposes {@code run}/{@code close} and not its lock:
 *
 * <ul>
 *   <li>{@link #podBinder()}: the scheduler-extender Bind with re-fit under the node lock ({@code
 *       pkg/scheduler/scheduler.go} Bind, spec §2.3, §3.4);
 *   <li>{@link #extenderFilter()}: the extender Filter on fresh usage (spec §2.2);
 *   <li>{@link #devicePluginHandoff(String)}: a device plugin's side of the bind → Allocate
 *       hand-off ({@code pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go}, spec §3);
 *   <li>{@link #awaitReady(Duration)} and {@link #close()}.
 * </ul>
 *
 * The client-neutral stack is bind's {@link HamiStack} (flows, one node lock per vendor lock key,
 * one gang-aware acquire loop); this class supplies client-java's parts: the {@link
 * KubernetesCluster} ports and {@link KubernetesLockStack#nodeAnnotationBackend} (annotation locks
 * on Node objects, one node watch feeding every key's wake-up queue; {@link Builder#backend} plugs
 * another), from one {@link LockStackSettings}.
 *
 * <pre>{@code
 * ApiClient client = Config.defaultClient();
 * try (KubernetesHamiStack hami = KubernetesHamiStack.builder(client)   // VendorRegistry.discover()
 *         .lockTimeout(Duration.ofMinutes(5)).listener(metrics).build()) {
 *     hami.awaitReady(Duration.ofSeconds(10));
 *     BindResult r = hami.podBinder().bind("default", "train-0", podUid, "gpu-node-1");
 *     switch (r.outcome()) {
 *         case BOUND -> log.info("bound in {} (lock wait {})", r.timings().total(), r.timings().lockWait());
 *         case CONTENDED, TIMED_OUT, DOES_NOT_FIT -> retryLater(r.reason());
 *         default -> fail(r.reason());
 *     }
 * }
 * // a Java device plugin on node gpu-node-1, in its Allocate handler:
 * HandoffResult h = hami.devicePluginHandoff("NVIDIA").allocate("gpu-node-1", List.of(1));
 * }</pre>
 *
 * <p><b>Threads.</b> The stack starts one daemon thread when the watch is on: the one node watch
 * that serves every lock key ({@code NodeLockWatch}, named {@code hami-lock-node-watch-N}); none
 * when it is off. The flows run on the calling thread ({@code bindAsync} on the caller's executor).
 * {@link #close()} stops and joins the watch thread (up to 5 s). OkHttp's connection-pool and
 * dispatcher threads belong to the {@code ApiClient} passed in; the stack does not own or stop
 * them.
 *
 * <p><b>After {@link #close()}.</b> Unlike a lock-only {@link KubernetesLockStack}, whose close
 * stops only its watch and leaves the lock usable (waiters then poll), every flow of this stack
 * refuses new work with a typed failure ({@link HamiStack}'s class comment); {@link #awaitReady}
 * returns false. Thread-safe.
 */
public final class KubernetesHamiStack extends HamiStack {

  private final LockStackSettings settings;

  private KubernetesHamiStack(LockStackSettings settings, HamiStack stack) {
    super(stack);
    this.settings = settings;
  }

  /**
   * @param apiClient the configured client (base path, credentials); request timeouts are applied
   *     per call, so its own read timeout does not matter
   * @return a builder with: {@link VendorRegistry#discover()}, {@link LockStackSettings#defaults()}
   *     (HAMi's retry policy 100 ms poll / 28 s / extender HTTP timeout 30 s, request timeout 10 s,
   *     5 attempts, lock timeout from {@code HAMI_NODELOCK_EXPIRE} or 5 min, release watch on,
   *     system UTC clock), re-fit under the lock on, Filter annotations written
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  /**
   * @param apiClient the configured client
   * @param settings the lock stack's settings as a whole (their key is replaced by each vendor's
   *     lock key)
   * @return a builder preset with {@code settings}
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(ApiClient apiClient, LockStackSettings settings) {
    return builder(apiClient).settings(settings);
  }

  /**
   * @return the settings every lock stack was built from (key: the first lock key)
   */
  public LockStackSettings settings() {
    return settings;
  }

  /**
   * Builder for {@link KubernetesHamiStack}: the {@link LockStackSettings} setters (inherited, each
   * declared once: lock timeout and its precedence, retry policy, request timeout, attempts, watch,
   * clocks, listener, owner liveness, liveness cache TTL, environment), plus what only the whole
   * stack has, forwarded to {@link HamiStack.Builder} (documented there): vendors, fitter, re-fit,
   * Filter annotations, a backend, ports, the Filter's reader; and the watch's client. The
   * settings' {@code key} is replaced by each vendor's lock key. Not thread-safe.
   */
  public static final class Builder extends LockStackSettings.Configurer<Builder> {
    private final ApiClient apiClient;
    private final HamiStack.Builder stack = HamiStack.builder();
    private ApiClient watchApiClient;

    private Builder(ApiClient apiClient) {
      this.apiClient = apiClient;
    }

    @Override
    protected Builder self() {
      return this;
    }

    /**
     * @param registry {@link HamiStack.Builder#registry}
     * @return this builder
     */
    public Builder registry(VendorRegistry registry) {
      stack.registry(registry);
      return this;
    }

    /**
     * @param on {@link HamiStack.Builder#refitUnderLock}
     * @return this builder
     */
    public Builder refitUnderLock(boolean on) {
      stack.refitUnderLock(on);
      return this;
    }

    /**
     * @param on {@link HamiStack.Builder#writeFilterAnnotations}
     * @return this builder
     */
    public Builder writeFilterAnnotations(boolean on) {
      stack.writeFilterAnnotations(on);
      return this;
    }

    /**
     * Runs the locks on {@code backend} instead of {@link
     * KubernetesLockStack#nodeAnnotationBackend} with its node watch (e.g. another client's store
     * and release feeder); {@link HamiStack.Builder#backend}.
     *
     * @param backend the backend, or {@code null} for the default
     * @return this builder
     */
    public Builder backend(LockBackend backend) {
      stack.backend(backend);
      return this;
    }

    /**
     * @param watchApiClient client for the lock watches (default derived from the main client,
     *     without read timeout)
     * @return this builder
     */
    public Builder watchApiClient(ApiClient watchApiClient) {
      this.watchApiClient = watchApiClient;
      return this;
    }

    /**
     * @param fitter {@link HamiStack.Builder#fitter}
     * @return this builder
     */
    public Builder fitter(PodFitter fitter) {
      stack.fitter(fitter);
      return this;
    }

    /**
     * {@link HamiStack.Builder#schedulerFlags}: HAMi's scheduler flags' lock settings (the default
     * request timeout follows from their retry policy) and node and GPU policies.
     *
     * @param flags the parsed flags
     * @return this builder
     * @throws NullPointerException if {@code flags} is null
     */
    public Builder schedulerFlags(HamiSchedulerFlags flags) {
      LockSettings lock = flags.lockSettings();
      stack.schedulerFlags(flags); // its node and GPU policies; the lock settings are set below
      return retryPolicy(lock.retryPolicy()).lockTimeout(lock.lockTimeout());
    }

    /**
     * {@link HamiStack.Builder#ports} (default: {@link KubernetesCluster} over the stack's client
     * with the settings' request timeout and attempts).
     *
     * @param reader fresh reads (the bind flow and the hand-off read through it)
     * @param writer pod patches, Bindings and pod Warning Events
     * @return this builder
     * @throws NullPointerException naming a null argument
     */
    public Builder ports(ClusterReader reader, ClusterWriter writer) {
      stack.ports(reader, writer);
      return this;
    }

    /**
     * @param filterReader {@link HamiStack.Builder#filterReader}
     * @return this builder
     */
    public Builder filterReader(ClusterReader filterReader) {
      stack.filterReader(filterReader);
      return this;
    }

    /**
     * Builds the stack and starts the lock watches (if on).
     *
     * @return the stack; close it to stop the watches
     * @throws IllegalArgumentException naming the setting: any {@link LockStackSettings} rule, or a
     *     registry whose vendors name no lock key
     */
    public KubernetesHamiStack build() {
      LockStackSettings s = settings();
      HamiStack h =
          stack
              .lockSettings(s.lock())
              .clientDefaults(
                  () ->
                      KubernetesCluster.builder(apiClient)
                          .requestTimeout(s.requestTimeout())
                          .maxAttempts(s.maxAttempts())
                          .build(),
                  lock ->
                      KubernetesLockStack.nodeAnnotationBackend(
                          apiClient,
                          s,
                          KubernetesLockStack.nodeLockWatch(apiClient, watchApiClient, s)))
              .build();
      return new KubernetesHamiStack(s.withKey(h.lockKeys().get(0)), h);
    }
  }
}
