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
 * {@link HamiStack} (flows and close behaviour documented there) over client-java: the {@link
 * KubernetesCluster} ports and {@link KubernetesLockStack#nodeAnnotationBackend} (one node watch
 * feeding every lock key), wired from one {@link LockStackSettings}.
 *
 * <p><b>Threads.</b> One daemon thread when the watch is on ({@code hami-lock-node-watch-N}),
 * stopped and joined (up to 5 s) by {@link #close()}; the flows run on the calling thread. Unlike a
 * lock-only {@link KubernetesLockStack}, a closed stack refuses new work. Thread-safe.
 */
public final class KubernetesHamiStack extends HamiStack {

  private final LockStackSettings settings;

  private KubernetesHamiStack(LockStackSettings settings, HamiStack stack) {
    super(stack);
    this.settings = settings;
  }

  /**
   * @return a builder with {@link VendorRegistry#discover()}, {@link LockStackSettings#defaults()},
   *     re-fit under the lock on, Filter annotations written
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  /**
   * @return a builder preset with {@code settings} (the key replaced by each vendor's)
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(ApiClient apiClient, LockStackSettings settings) {
    return builder(apiClient).settings(settings);
  }

  /** {@return the settings every lock stack was built from (key: the first lock key)} */
  public LockStackSettings settings() {
    return settings;
  }

  /** {@link LockStackSettings} setters, {@link #stack} for the rest. Not thread-safe. */
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

    /** As {@link HamiStack.Builder#schedulerFlags}, the lock settings applied to this builder. */
    public Builder schedulerFlags(HamiSchedulerFlags flags) {
      LockSettings lock = flags.lockSettings();
      stack.schedulerFlags(flags); // its node and GPU policies; the lock settings are set below
      return retryPolicy(lock.retryPolicy()).lockTimeout(lock.lockTimeout());
    }

    /**
     * The stack's own settings on {@link HamiStack.Builder} (its lock settings are replaced by this
     * builder's at {@link #build()}).
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
