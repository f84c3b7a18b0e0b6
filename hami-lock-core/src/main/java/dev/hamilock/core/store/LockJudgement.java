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
 * The lock rules of {@link StoreNodeLock} as one pure function: given a lock value someone else
 * holds, what its holder's status is and the clock, may it be taken over, and why not. {@link
 * StoreNodeLock#acquire} decides with it (after its same-owner check and its owner-liveness
 * lookup); tools that only inspect locks (the {@code hami-lock doctor}) call it with what they
 * read, so there is one implementation of the rules.
 *
 * <p>Rules, in order (HAMi {@code pkg/util/nodelock/nodelock.go} trusts the timestamp alone):
 *
 * <ol>
 *   <li>malformed value ({@code record} empty; HAMi blocks the node forever): held by an unknown
 *       owner until first seen more than one lock timeout ago, then expired;
 *   <li>holder status present and {@linkplain OwnerLiveness.State#isGone() gone} (NotFound,
 *       Succeeded, Failed, terminating) ⇒ {@link Decision#DANGLING};
 *   <li>expired by the <em>clock-skew rule</em>: first seen more than one lock timeout ago (the
 *       observer's clock) and either the timestamp older than the timeout, strictly, or first seen
 *       more than two timeouts ago — so a writer clock behind ours cannot make a live lock look
 *       expired, and one ahead (even {@code 9999-12-31T23:59:59Z}) blocks a node for two timeouts
 *       at most; a restarted observer counts afresh. Then {@link Decision#STUCK_ALLOCATING} if the
 *       holder {@linkplain OwnerLiveness.HolderStatus#mayStillBeAllocated may still be allocated}
 *       on {@code node} (HAMi#3096: HAMi's device plugin finds the pod to serve from the lock
 *       value, spec §3.1; no second deadline — the kubelet fails the pod on an Allocate error, a
 *       lost node's pods are evicted, else an operator deletes the pod; {@link StoreNodeLock} warns
 *       once per value), otherwise {@link Decision#EXPIRED}. With the status unknown, expiry alone
 *       transfers;
 *   <li>otherwise {@link Decision#HELD}.
 * </ol>
 *
 * Legacy timestamp-only and ownerless values have no holder status (never dangling) and follow
 * rules 3-4. Nothing here throws for any timestamp between years 0001 and 9999 (ages saturate).
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
    /**
     * Expired, but the holder is alive, bound to the node, not Running and its bind-phase is not
     * {@code success}/{@code failed}: the device plugin may still serve it, so the lock is not
     * taken over (HAMi#3096).
     */
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
   * @param node the locked node (for {@link OwnerLiveness.HolderStatus#mayStillBeAllocated})
   * @param record the parsed value ({@code LockRecordCodec.parse}); empty if the value is malformed
   * @param holder the holder's status from an {@link OwnerLiveness}; empty when the value names no
   *     owner (legacy, ownerless, malformed) or the status was not looked up
   * @param firstSeen when the observer first saw this exact value on this node and key in its
   *     current appearance ({@link StoreNodeLock}'s memo; a one-shot observer that trusts the
   *     timestamp passes {@code record.acquiredAt()})
   * @param lockTimeout the lock timeout; positive
   * @return the decision with its ages
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
    if (holder.isPresent() && holder.get().state().isGone()) {
      return new Result(Decision.DANGLING, Optional.of(age), seenFor);
    }
    if (expired) {
      boolean stuck = holder.isPresent() && holder.get().mayStillBeAllocated(node);
      return new Result(
          stuck ? Decision.STUCK_ALLOCATING : Decision.EXPIRED, Optional.of(age), seenFor);
    }
    return new Result(Decision.HELD, Optional.of(age), seenFor);
  }

  /**
   * @param d a duration
   * @return its Go text at millisecond precision (as the lock's messages print ages); never throws
   */
  public static String formatAge(Duration d) {
    return Ages.format(Objects.requireNonNull(d, "d"));
  }
}
