package dev.hamilock.core.store;

import dev.hamilock.core.LockSettings;
import dev.hamilock.core.OwnerLiveness;
import java.util.Objects;
import java.util.Optional;

/**
 * The seam a Kubernetes client plugs into the lock stacks: where lock values live, what wakes
 * waiters on release and who tells a dangling holder from a live one; the rest is core's, wired
 * from {@link LockSettings}. A stack owns its backend's feeder: every key's store first, then
 * {@link #start()}, {@link #close()} with the stack.
 *
 * @param stores the lock store of each lock key
 * @param releases the release feeder, empty to poll only (HAMi's 100 ms)
 * @param ownerLiveness the default owner liveness ({@link LockSettings#ownerLiveness()} overrides
 *     it)
 */
public record LockBackend(
    StoreFactory stores, Optional<ReleaseFeeder> releases, OwnerLiveness ownerLiveness)
    implements AutoCloseable {

  /**
   * @throws NullPointerException naming a null component
   */
  public LockBackend {
    Objects.requireNonNull(stores, "stores");
    Objects.requireNonNull(releases, "releases");
    Objects.requireNonNull(ownerLiveness, "ownerLiveness");
  }

  /** Creates the {@link LockStore} of one lock key. */
  @FunctionalInterface
  public interface StoreFactory {
    /**
     * The store of {@code key} (one call per key), wired to {@code releases} for its release signal
     * and watched view.
     */
    LockStore store(String key, Optional<ReleaseFeeder> releases);
  }

  /**
   * The lock of {@code settings.key()} on a new store (owner liveness: the settings', else this
   * backend's).
   *
   * @throws NullPointerException if {@code settings} is null
   */
  public StoreNodeLock nodeLock(LockSettings settings) {
    LockStore store = stores.store(settings.key(), releases);
    LockSettings s =
        settings.ownerLiveness().isPresent()
            ? settings
            : LockSettings.builder(settings).ownerLiveness(ownerLiveness).build();
    return StoreNodeLock.create(store, s);
  }

  /** Starts the release feeder, if any (after every key's store was created); returns this. */
  public LockBackend start() {
    releases.ifPresent(ReleaseFeeder::start);
    return this;
  }

  /** Stops the release feeder, if any. Idempotent. */
  @Override
  public void close() {
    releases.ifPresent(ReleaseFeeder::close);
  }
}
