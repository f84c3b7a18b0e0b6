package dev.hamilock.core.store;

import static dev.hamilock.core.internal.Checks.checkArgument;

import dev.hamilock.core.GoDuration;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.OwnerLiveness;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The lock rules of {@link StoreNodeLock} as one pure function, also called by the doctor tool: may
 * a value someone else holds be taken over? In order (HAMi {@code pkg/util/nodelock/nodelock.go}
 * trusts the timestamp alone):
 *
 * <ol>
 *   <li>malformed value (HAMi blocks the node forever): held until first seen more than one lock
 *       timeout ago, then expired;
 *   <li>holder status gone ({@link OwnerLiveness.State}) ⇒ {@link Decision#DANGLING};
 *   <li>expired (first seen over one timeout ago and the stamp older than the timeout, or first
 *       seen over two timeouts ago, so a skewed writer clock neither expires a live lock nor blocks
 *       a node longer) ⇒ {@link Decision#STUCK_ALLOCATING} if the holder {@linkplain
 *       OwnerLiveness.HolderStatus#mayStillBeAllocated may still be allocated} (HAMi#3096), else
 *       {@link Decision#EXPIRED};
 *   <li>otherwise {@link Decision#HELD}.
 * </ol>
 *
 * Legacy and ownerless values have no holder status. Ages saturate: nothing throws for a timestamp
 * of years 0001 to 9999.
 */
public final class LockJudgement {

  /** What may be done with a lock value held by someone else. */
  public enum Decision {
    /** Still held: contention. */
    HELD,
    /** Expired: may be taken over ({@code TOOK_OVER_EXPIRED}). */
    EXPIRED,
    /** Holder gone (deleted, terminating, Succeeded, Failed): may be taken over at once. */
    DANGLING,
    /** Expired, but the device plugin may still serve the holder: not taken over (HAMi#3096). */
    STUCK_ALLOCATING
  }

  /**
   * The decision and the ages it was made from.
   *
   * @param stampAge {@code now - timestamp}, saturated; empty for a malformed value
   * @param seenFor {@code now - firstSeen}, saturated
   */
  public record Result(Decision decision, Optional<Duration> stampAge, Duration seenFor) {

    /**
     * @throws NullPointerException if a component is null
     */
    public Result {
      Objects.requireNonNull(decision, "decision");
      Objects.requireNonNull(stampAge, "stampAge");
      Objects.requireNonNull(seenFor, "seenFor");
    }
  }

  private LockJudgement() {}

  /**
   * Judges one lock value held by someone other than the caller.
   *
   * @param record the parsed value; empty if malformed
   * @param holder the holder's status; empty if the value names no owner or it was not looked up
   * @param firstSeen when the observer first saw this value on this node (a one-shot observer that
   *     trusts the timestamp passes {@code record.acquiredAt()})
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the timeout is not positive
   */
  public static Result judge(
      String node,
      Optional<LockRecord> record,
      Optional<OwnerLiveness.HolderStatus> holder,
      Instant now,
      Instant firstSeen,
      Duration lockTimeout) {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(record, "record");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(firstSeen, "firstSeen");
    Objects.requireNonNull(lockTimeout, "lockTimeout");
    checkArgument(
        !lockTimeout.isNegative() && !lockTimeout.isZero(),
        "lockTimeout must be positive: %s",
        GoDuration.format(lockTimeout));
    Duration seenFor = Ages.between(firstSeen, now);
    if (record.isEmpty()) {
      boolean expired = seenFor.compareTo(lockTimeout) > 0;
      return new Result(expired ? Decision.EXPIRED : Decision.HELD, Optional.empty(), seenFor);
    }
    Duration age = Ages.between(record.get().acquiredAt(), now);
    boolean expired = Ages.expired(age, seenFor, lockTimeout);
    if (holder.isPresent() && holder.get().state() != OwnerLiveness.State.ALIVE) {
      return new Result(Decision.DANGLING, Optional.of(age), seenFor);
    }
    if (expired) {
      boolean stuck = holder.isPresent() && holder.get().mayStillBeAllocated(node);
      return new Result(
          stuck ? Decision.STUCK_ALLOCATING : Decision.EXPIRED, Optional.of(age), seenFor);
    }
    return new Result(Decision.HELD, Optional.of(age), seenFor);
  }

  /** Go text of {@code d} at millisecond precision, as the lock's messages print ages. */
  public static String formatAge(Duration d) {
    return Ages.format(Objects.requireNonNull(d, "d"));
  }
}
