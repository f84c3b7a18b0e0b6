package dev.hamilock.core.acquire;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.core.LockOwner;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The result of a successful {@link NodeLockAcquirer} call.
 *
 * @param node the locked node
 * @param owner the pod that holds the locks
 * @param keys the lock keys now held, in acquisition order (byte order of the key)
 * @param waited wall time from the start of the first attempt to success
 * @param attempts attempts made (1 without contention)
 * @param version the object version the winning attempt was conditioned on ({@link
 *     dev.hamilock.core.VersionedAcquire}), as given to the call's {@code beforeVersionedAttempt};
 *     empty when it was a plain attempt
 */
public record LockAcquisition(
    String node,
    LockOwner owner,
    List<String> keys,
    Duration waited,
    int attempts,
    Optional<String> version) {

  /** Copies {@code keys}; validates that nothing is null and {@code attempts >= 1}. */
  public LockAcquisition {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(keys, "keys");
    Objects.requireNonNull(waited, "waited");
    Objects.requireNonNull(version, "version");
    checkArgument(attempts >= 1, "attempts must be at least 1: %s", attempts);
    keys = List.copyOf(keys);
  }
}
