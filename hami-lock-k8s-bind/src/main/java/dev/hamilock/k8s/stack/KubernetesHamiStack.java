package dev.hamilock.k8s.stack;

import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.bind.HamiStack;
import dev.hamilock.core.LockSettings;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.k8s.KubernetesLockStack;
import dev.hamilock.k8s.LockStackSettings;
import dev.hamilock.k8s.bind.KubernetesCluster;
import io.kubernetes.client.openapi.ApiClient;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The whole hami-lock stack for one {@link ApiClient}: bind's client-neutral {@link HamiStack} (its
 * flows {@code podBinder()}, {@code extenderFilter()}, {@code devicePluginHandoff(vendor)}, {@code
 * awaitReady}, {@code close()} and their behaviour after close, documented there) with
 * client-java's parts: the {@link KubernetesCluster} ports and {@link
 * KubernetesLockStack#nodeAnnotationBackend} (annotation locks on Node objects, one node watch
 * feeding every lock key's wake-up queue), wired from one {@link LockStackSettings}.
 *
 * <pre>{@code
 * ApiClient client = Config.defaultClient();
 * try (KubernetesHamiStack hami = KubernetesHamiStack.builder(client)   // VendorRegistry.discover()
 *         .lockTimeout(Duration.ofMinutes(5)).listener(metrics).build()) {
 *     hami.awaitReady(Duration.ofSeconds(10));
 *     BindResult r = hami.podBinder().bind("default", "train-0", podUid, "gpu-node-1");
 * }
 * }</pre>
 *
 * <p><b>Threads.</b> One daemon thread when the watch is on ({@code hami-lock-node-watch-N}),
 * stopped and joined (up to 5 s) by {@link #close()}; the flows run on the calling thread. OkHttp's
 * threads belong to the {@code ApiClient} passed in. Unlike a lock-only {@link
 * KubernetesLockStack}, a closed stack refuses new work. Thread-safe.
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
   * @return a builder with {@link VendorRegistry#discover()}, {@link LockStackSettings#defaults()},
   *     re-fit under the lock on, Filter annotations written
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

  /** {@return the settings every lock stack was built from (key: the first lock key)} */
  public LockStackSettings settings() {
    return settings;
  }

  /**
   * Builder: the inherited {@link LockStackSettings} setters (their {@code key} replaced by each
   * vendor's lock key), the whole stack's settings of {@link HamiStack.Builder}, and the watch's
   * client. Not thread-safe.
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
     * @param watchApiClient client for the lock watches (default derived from the main client,
     *     without read timeout)
     */
    public Builder watchApiClient(ApiClient watchApiClient) {
      this.watchApiClient = watchApiClient;
      return this;
    }

    /**
     * As {@link HamiStack.Builder#schedulerFlags}, the flags' lock settings applied to this
     * builder's (the default request timeout follows from their retry policy).
     */
    public Builder schedulerFlags(HamiSchedulerFlags flags) {
      LockSettings lock = flags.lockSettings();
      stack.schedulerFlags(flags); // its node and GPU policies; the lock settings are set below
      return retryPolicy(lock.retryPolicy()).lockTimeout(lock.lockTimeout());
    }

    /**
     * The whole stack's own settings, set on {@link HamiStack.Builder}: {@code registry}, {@code
     * fitter}, {@code refitUnderLock}, {@code writeFilterAnnotations}, {@code backend}, {@code
     * ports} (default: {@link KubernetesCluster} over the client with this builder's request
     * timeout and attempts) and {@code filterReader}. Lock settings set there are replaced by this
     * builder's at {@link #build()}.
     *
     * @throws NullPointerException if {@code settings} is null
     */
    public Builder stack(Consumer<HamiStack.Builder> settings) {
      settings.accept(stack);
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
                  () -> KubernetesCluster.create(apiClient, s.requestTimeout(), s.maxAttempts()),
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
