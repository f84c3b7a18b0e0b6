package dev.hamilock.core.store;

import dev.hamilock.core.LockSettings;
import dev.hamilock.core.OwnerLiveness;
import java.util.Objects;
import java.util.Optional;

/**
 * The seam a Kubernetes client plugs into the lock stacks (client-java's {@code
 * KubernetesLockStack} and {@code KubernetesHamiStack}): where lock values live ({@link
 * StoreFactory}, one {@link LockStore} per lock key), what wakes waiters on release ({@link
 * ReleaseFeeder}, optional) and who tells a dangling holder from a live one ({@link
 * OwnerLiveness}). Everything else — HAMi's lock semantics ({@link StoreNodeLock}), the fair
 * wake-up queue, the gang-aware acquire loop — is core's and is wired from {@link LockSettings} the
 * same way for every backend, as client-java's leader election takes its {@code Lock} in its
 * config. The default of the client-java stacks is node annotations ({@code
 * NodeAnnotationLockStore}) fed by one node watch ({@code NodeLockWatch}) with a pod lookup as
 * owner liveness.
 *
 * <p>A stack given a backend owns its feeder: it asks for every key's store first, then {@link
 * #start()}s the feeder, and {@link #close()}s it when the stack closes.
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
     * @param key the lock key (a valid annotation key, {@link LockSettings#key()})
     * @param releases the backend's feeder, to wire as the store's {@link
     *     LockStore#releaseSignal()} ({@link ReleaseFeeder#releaseSignal(String)}) and, where the
     *     store can use it, its watched view ({@link ReleaseFeeder#observedLockValue})
     * @return the store; every call of a stack is for a different key
     */
    LockStore store(String key, Optional<ReleaseFeeder> releases);
  }

  /**
   * HAMi's node lock of {@code settings.key()} over this backend: one store from {@link #stores},
   * core's {@link StoreNodeLock} semantics with {@code settings} (its owner liveness, or this
   * backend's).
   *
   * @param settings the lock settings, key included
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

  /**
   * Starts the release feeder, if any (after every key's store was created).
   *
   * @return this backend
   */
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
