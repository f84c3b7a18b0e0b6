package dev.hamilock.k8s;

import dev.hamilock.core.FairReleaseQueue;
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
 * pkg/util/nodelock/nodelock.go}) on client-java, assembled from one validating builder: the
 * one-request {@link NodeAnnotationLockStore}, {@link PodOwnerLiveness} for dangling takeover,
 * core's {@link StoreNodeLock} semantics, the node watch feeding core's fair wake-up queue ({@link
 * FairReleaseQueue}: one waiter per release, oldest first) — its own, or a {@link LockBackend}
 * ({@link Builder#backend}: one node watch shared by every lock key of a client, or another
 * client's store and release feeder) — and core's gang-aware {@link NodeLockAcquirer}, which opens
 * and closes its waiter handles itself (nothing for a caller to report back).
 *
 * <pre>{@code
 * try (KubernetesLockStack locks = KubernetesLockStack.builder(apiClient).lockTimeout(Duration.ofMinutes(5)).build()) {
 *     LockOwner owner = KubernetesLockOwners.lockOwner(pod);
 *     LockAcquisition a = locks.acquirer().acquire(node, owner, KubernetesLockOwners.isGangMember(pod),
 *             List.of(locks.nodeLock()));
 *     try { ... bind ... } finally { locks.acquirer().releaseAll(node, owner, List.of(locks.nodeLock())); }
 * }
 * }</pre>
 *
 * <p>Costs (counted by the emulator in this module's tests): an uncontended acquire or a release is
 * 1 PATCH. A contended attempt is a PATCH answered 422, one GET of the node (skipped while the
 * watch shows the node locked) and one GET of the holder pod (skipped while an ALIVE answer for the
 * same value is younger than {@link LockSettings#livenessCacheTtl()}). A watching waiter woken by
 * the release acquires in at most 3 requests (PATCH 422, PATCH 200, a pod GET); with the watch down
 * it polls ({@link RetryPolicy}).
 *
 * <p>Settings: one {@link LockStackSettings} value ({@link #builder(ApiClient, LockStackSettings)}
 * or the inherited setters of {@link Builder}). Threads: one daemon watch thread ({@code
 * hami-lock-node-watch-N}) while its own watch is on; {@link #close()} stops it ({@link
 * LockStack}); unlike {@code KubernetesHamiStack}, the lock stays usable after it. Thread-safe.
 */
public final class KubernetesLockStack extends LockStack {

  private final LockStackSettings settings;

  private KubernetesLockStack(LockStackSettings settings, LockBackend backend, boolean owns) {
    super(settings.lock(), backend, owns);
    this.settings = settings;
  }

  /**
   * A builder on {@code apiClient} (base path, credentials) with HAMi's defaults ({@link
   * LockStackSettings#defaults()}).
   *
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  /**
   * A builder preset with {@code settings}.
   *
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(ApiClient apiClient, LockStackSettings settings) {
    return builder(apiClient).settings(settings);
  }

  /**
   * client-java's backend: one {@link NodeAnnotationLockStore} per key (one request per lock
   * operation, {@code settings}' request timeout, attempts and wait clock; fed by {@code releases}
   * and reading its watched view), and {@link PodOwnerLiveness}. Start it after creating every
   * key's lock; close it to stop the feeder.
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
   * client-java's release feeder: one {@link NodeLockWatch} (not started) on {@code settings}'
   * request timeout and wait clock, if {@code settings.watch()}; {@code watchApiClient} {@code
   * null} derives the watch's client from {@code apiClient}.
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

  /**
   * Builder for {@link KubernetesLockStack}: the {@link LockStackSettings} setters (inherited, each
   * declared once) plus the watch's client or a backend. Not thread-safe.
   */
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
     * Runs the lock on {@code backend} instead of its own (e.g. another client's, or {@link
     * KubernetesLockStack#nodeAnnotationBackend} over one {@link NodeLockWatch} serving every lock
     * key of a client). The stack neither starts nor closes it: its owner does, after creating
     * every key's lock. {@code null}: the default.
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
     * @return the locks
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
