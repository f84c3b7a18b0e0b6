package dev.hamilock.k8s;

import dev.hamilock.core.LockSettings;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.store.LockBackend;
import dev.hamilock.core.store.LockStack;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.k8s.lock.NodeAnnotationLockStore;
import dev.hamilock.k8s.lock.PodOwnerLiveness;
import dev.hamilock.k8s.watch.NodeLockWatch;
import io.kubernetes.client.openapi.ApiClient;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * HAMi's node lock ({@code hami.io/mutex.lock} on Node objects, {@code
 * pkg/util/nodelock/nodelock.go}) on client-java: {@link NodeAnnotationLockStore}, {@link
 * PodOwnerLiveness}, core's {@link StoreNodeLock} and gang-aware {@link NodeLockAcquirer}, woken by
 * its own node watch or a shared {@link LockBackend} ({@link Builder#backend}).
 *
 * <p>Costs: an uncontended acquire or a release is 1 PATCH; a contended attempt a PATCH answered
 * 422, a node GET (skipped while the watch shows it locked) and a holder pod GET (skipped within
 * {@link LockSettings#livenessCacheTtl()}); a woken waiter acquires in at most 3 requests. Without
 * the watch it polls ({@link RetryPolicy}).
 *
 * <p>One daemon watch thread ({@code hami-lock-node-watch-N}) while its own watch is on; {@link
 * #close()} stops it and the lock stays usable. Thread-safe.
 */
public final class KubernetesLockStack extends LockStack {

  private final LockStackSettings settings;

  private KubernetesLockStack(LockStackSettings settings, LockBackend backend, boolean owns) {
    super(settings.lock(), backend, owns);
    this.settings = settings;
  }

  /**
   * A builder with {@link LockStackSettings#defaults()}.
   *
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  /**
   * client-java's backend: a {@link NodeAnnotationLockStore} per key fed by {@code releases}, and
   * {@link PodOwnerLiveness}. Start it after creating every key's lock; close it to stop the
   * feeder.
   *
   * @param releases the release feeder (e.g. {@link #nodeLockWatch}), empty to poll only
   * @throws NullPointerException if an argument is null
   */
  public static LockBackend nodeAnnotationBackend(
      ApiClient apiClient, LockStackSettings settings, Optional<ReleaseFeeder> releases) {
    Objects.requireNonNull(apiClient, "apiClient");
    Duration requestTimeout = settings.requestTimeout();
    return new LockBackend(
        (key, feeder) ->
            NodeAnnotationLockStore.builder(apiClient, requestTimeout)
                .maxAttempts(settings.maxAttempts())
                .waitClock(settings.lock().waitClock())
                .releases(key, feeder)
                .build(),
        releases,
        PodOwnerLiveness.create(apiClient, requestTimeout, settings.maxAttempts()));
  }

  /**
   * A {@link NodeLockWatch} (not started) if {@code settings.watch()}; a null {@code
   * watchApiClient} is derived from {@code apiClient}.
   *
   * @throws NullPointerException if {@code apiClient} or {@code settings} is null
   */
  public static Optional<ReleaseFeeder> nodeLockWatch(
      ApiClient apiClient, ApiClient watchApiClient, LockStackSettings settings) {
    if (!settings.watch()) {
      return Optional.empty();
    }
    NodeLockWatch.Builder wb =
        NodeLockWatch.builder(apiClient)
            .requestTimeout(settings.requestTimeout())
            .waitClock(settings.lock().waitClock());
    if (watchApiClient != null) {
      wb.watchApiClient(watchApiClient);
    }
    return Optional.of(wb.build());
  }

  /** {@return the settings this stack was built with (lock timeout resolved)} */
  public LockStackSettings settings() {
    return settings;
  }

  /** The {@link LockStackSettings} setters plus the watch's client or a backend. */
  public static final class Builder extends LockStackSettings.Configurer<Builder> {
    private final ApiClient apiClient;
    private ApiClient watchApiClient;
    private LockBackend backend;

    private Builder(ApiClient apiClient) {
      this.apiClient = apiClient;
    }

    @Override
    protected Builder self() {
      return this;
    }

    /**
     * Runs the lock on {@code backend} (e.g. {@link KubernetesLockStack#nodeAnnotationBackend}
     * shared by a client's lock keys), which its owner starts and closes; {@code null}: its own.
     */
    public Builder backend(LockBackend backend) {
      this.backend = backend;
      return this;
    }

    /** The client for the watch, without read timeout (default: derived from the main one). */
    public Builder watchApiClient(ApiClient watchApiClient) {
      this.watchApiClient = watchApiClient;
      return this;
    }

    /**
     * Builds and, if it owns its watch, starts the watch thread.
     *
     * @throws IllegalArgumentException naming the setting: any {@link LockStackSettings} or {@link
     *     LockSettings} rule
     */
    public KubernetesLockStack build() {
      LockStackSettings s = settings();
      boolean own = backend == null;
      LockBackend b =
          own
              ? nodeAnnotationBackend(apiClient, s, nodeLockWatch(apiClient, watchApiClient, s))
              : backend;
      return new KubernetesLockStack(s, b, own);
    }
  }
}
