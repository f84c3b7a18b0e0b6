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
 * <p>Costs (counted by the emulator in this module's tests): an uncontended acquire is 1 request
 * (PATCH), a release 1 request (PATCH). A contended attempt is a PATCH answered 422, then one GET
 * of the node to learn the holder — skipped while the watch is connected and shows the node locked
 * — and one GET of the holder pod for the dangling check, skipped while an ALIVE answer for the
 * same lock value is younger than {@link LockSettings#livenessCacheTtl()} (1 s). While the watch is
 * connected, a gang member waits for its release wake-up (one waiter per release, in arrival order)
 * up to {@link RetryPolicy#watchedPollInterval()} (1 s) instead of re-trying every 100 ms; while it
 * is down, the 100 ms poll applies. So a watching waiter that is woken by the release acquires in 2
 * requests (PATCH 422, PATCH 200) plus at most one pod GET per holder value per second, i.e. at
 * most 3.
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
   * @param apiClient the client (base path, credentials); request timeouts are applied per call
   * @return a builder with HAMi's defaults ({@link LockStackSettings#defaults()}): key {@code
   *     hami.io/mutex.lock}, lock timeout explicit &gt; {@code HAMI_NODELOCK_EXPIRE} &gt; 5 min,
   *     retry policy 100 ms poll / 28 s / extender 30 s, request timeout 10 s, watch on, system UTC
   *     clock
   * @throws NullPointerException if {@code apiClient} is null
   */
  public static Builder builder(ApiClient apiClient) {
    Objects.requireNonNull(apiClient, "apiClient");
    return new Builder(apiClient);
  }

  /**
   * @param apiClient the client (base path, credentials)
   * @param settings the lock stack's settings, as a whole
   * @return a builder preset with {@code settings}
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(ApiClient apiClient, LockStackSettings settings) {
    return builder(apiClient).settings(settings);
  }

  /**
   * client-java's backend: one {@link NodeAnnotationLockStore} per key (one request per lock
   * operation, {@code settings}' request timeout, attempts and wait clock; fed by {@code releases}
   * and reading its watched view), and {@link PodOwnerLiveness}.
   *
   * @param apiClient the client
   * @param settings request timeout and attempts
   * @param releases the release feeder (e.g. {@link #nodeLockWatch}), empty to poll only
   * @return the backend (start it after creating every key's lock; close it to stop the feeder)
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
   * request timeout and wait clock, if {@code settings.watch()}.
   *
   * @param apiClient the client
   * @param watchApiClient client for the watch (its read timeout is replaced by none), or {@code
   *     null} to derive one from {@code apiClient}
   * @param settings watch on/off, request timeout, wait clock
   * @return the watch, empty if the watch is off
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
     * Runs the lock on {@code backend} instead of {@link KubernetesLockStack#nodeAnnotationBackend}
     * with an own {@link KubernetesLockStack#nodeLockWatch} (e.g. another client's store and
     * release feeder, or {@link KubernetesLockStack#nodeAnnotationBackend} over one {@link
     * NodeLockWatch} serving every lock key of a client: add every key before starting it, or it
     * relists once per late key). The stack neither starts nor closes it: its owner does, after
     * creating every key's lock.
     *
     * @param backend the backend, or {@code null} for the default
     * @return this builder
     */
    public Builder backend(LockBackend backend) {
      this.backend = backend;
      return this;
    }

    /**
     * @param watchApiClient client for the watch (its read timeout is replaced by none); default:
     *     derived from the main client
     * @return this builder
     */
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
