package dev.hamilock.fabric8;

import dev.hamilock.core.LockSettings;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.store.LockBackend;
import dev.hamilock.core.store.LockStack;
import dev.hamilock.core.store.ReleaseFeeder;
import dev.hamilock.core.store.StoreNodeLock;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Objects;
import java.util.Optional;

/**
 * HAMi's node lock ({@code hami.io/mutex.lock} on Node objects, {@code
 * pkg/util/nodelock/nodelock.go}) on fabric8, the twin of hami-lock-k8s's {@code
 * KubernetesLockStack}: core's {@link LockSettings} (the same setters, inherited from {@link
 * LockSettings.Configurer}) over a {@link LockBackend} of this module ({@link #backend}: {@link
 * Fabric8LockStore}, {@link Fabric8NodeLockWatch} feeding core's fair wake-up queue, {@link
 * Fabric8OwnerLiveness}), core's {@link StoreNodeLock} semantics and gang-aware {@link
 * NodeLockAcquirer}. Same requests on the wire as client-java's stack; request timeouts and
 * client-side retries are the fabric8 client's {@code Config} (set {@code requestRetryBackoffLimit}
 * to 0 to leave retries to the store: 5 attempts, back-off 20 ms to 1 s).
 *
 * <pre>{@code
 * try (Fabric8LockStack locks = Fabric8LockStack.builder(client).build()) {
 *     LockAcquisition a = locks.acquirer().acquire(node, owner, gangMember, List.of(locks.nodeLock()));
 *     try { ... bind ... } finally { locks.acquirer().releaseAll(node, owner, List.of(locks.nodeLock())); }
 * }
 * }</pre>
 *
 * <p>Threads: one daemon watch thread ({@code hami-lock-fabric8-node-watch-N}) while its own watch
 * is on. {@link #close()} stops only a watch this stack started; the lock stays usable and waiters
 * then poll every 100 ms. Thread-safe.
 */
public final class Fabric8LockStack extends LockStack {

  private final LockSettings settings;

  private Fabric8LockStack(LockSettings settings, LockBackend backend, boolean owns) {
    super(settings, backend, owns);
    this.settings = settings;
  }

  /**
   * @param client a fabric8 client (base URL, credentials, timeouts); not closed by the stack
   * @return a builder with HAMi's defaults ({@link LockSettings#defaults()}: key {@code
   *     hami.io/mutex.lock}, lock timeout explicit &gt; {@code HAMI_NODELOCK_EXPIRE} &gt; 5 min,
   *     poll 100 ms, system UTC clock) and the watch on
   * @throws NullPointerException if {@code client} is null
   */
  public static Builder builder(KubernetesClient client) {
    return new Builder(Objects.requireNonNull(client, "client"));
  }

  /**
   * fabric8's backend: one {@link Fabric8LockStore} per key (fed by {@code releases} and reading
   * its watched view) and {@link Fabric8OwnerLiveness}; what {@code
   * KubernetesLockStack.Builder#backend} or {@code KubernetesHamiStack} also take.
   *
   * @param client the fabric8 client
   * @param releases the release feeder (e.g. a {@link Fabric8NodeLockWatch}), empty to poll only
   * @return the backend (start it after creating every key's lock; close it to stop the feeder)
   * @throws NullPointerException if an argument is null
   */
  public static LockBackend backend(KubernetesClient client, Optional<ReleaseFeeder> releases) {
    Objects.requireNonNull(client, "client");
    return new LockBackend(
        (key, feeder) -> Fabric8LockStore.builder(client).releases(key, feeder).build(),
        releases,
        Fabric8OwnerLiveness.create(client));
  }

  /** {@return the settings this stack was built with (lock timeout resolved)} */
  public LockSettings settings() {
    return settings;
  }

  /**
   * Builder for {@link Fabric8LockStack}: the {@link LockSettings} setters (inherited, each
   * declared once) plus the watch. Not thread-safe.
   */
  public static final class Builder extends LockSettings.Configurer<Builder> {
    private final KubernetesClient client;
    private boolean watch = true;
    private Fabric8NodeLockWatch sharedWatch;

    private Builder(KubernetesClient client) {
      this.client = client;
    }

    @Override
    protected Builder self() {
      return this;
    }

    /**
     * @param watch whether waiters wake on a node watch's release signal (default on) or poll only
     * @return this builder
     */
    public Builder watch(boolean watch) {
      this.watch = watch;
      return this;
    }

    /**
     * Serves this stack's key from {@code shared} (one node watch per client for every lock key),
     * which its owner starts after adding every key and closes. Ignored when the watch is off.
     *
     * @param shared the watch, or {@code null} for an own one (the default)
     * @return this builder
     */
    public Builder nodeWatch(Fabric8NodeLockWatch shared) {
      this.sharedWatch = shared;
      return this;
    }

    /**
     * Builds and, if it owns its watch, starts the watch thread.
     *
     * @return the stack
     * @throws IllegalArgumentException naming the setting: any {@link LockSettings} rule
     */
    public Fabric8LockStack build() {
      LockSettings s = lockSettings();
      boolean own = watch && sharedWatch == null;
      Optional<ReleaseFeeder> releases =
          !watch
              ? Optional.empty()
              : Optional.of(own ? Fabric8NodeLockWatch.create(client, s.waitClock()) : sharedWatch);
      return new Fabric8LockStack(s, backend(client, releases), own);
    }
  }
}
