package dev.hamilock.bind;

import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;

import dev.hamilock.core.NodeLock;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;

/**
 * Port: the {@link NodeLock} of each vendor lock key ({@code hami.io/mutex.lock} for NVIDIA).
 * Implementations are thread-safe and return the same lock for the same key.
 */
@FunctionalInterface
public interface NodeLockProvider {

  /**
   * @return the lock for that key (its {@link NodeLock#key()} equals {@code key})
   * @throws IllegalArgumentException if this provider cannot lock {@code key} (configuration error)
   */
  NodeLock forKey(String key);

  /** Memoizes {@code factory} (e.g. a {@code StoreNodeLock} per key): one lock per key. */
  static NodeLockProvider cached(Function<String, NodeLock> factory) {
    Objects.requireNonNull(factory, "factory");
    ConcurrentMap<String, NodeLock> locks = new ConcurrentHashMap<>();
    return key -> {
      requireNonBlank(key, "lock key");
      return locks.computeIfAbsent(
          key,
          k -> {
            NodeLock lock =
                Objects.requireNonNull(factory.apply(k), "factory returned null for key " + k);
            checkArgument(
                lock.key().equals(k),
                "factory returned a lock for key %s when asked for %s",
                lock.key(),
                k);
            return lock;
          });
    };
  }
}
