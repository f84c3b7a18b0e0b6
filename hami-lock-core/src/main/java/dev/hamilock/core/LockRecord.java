package dev.hamilock.core;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;

/**
 * A parsed HAMi node-lock value ({@link LockRecordCodec}): when the lock was taken and by which
 * pod. The legacy timestamp-only form (HAMi &le; v2.3) and blank namespace/name parts have no
 * owner: like HAMi, never re-entrant nor dangling.
 *
 * @param acquiredAt the writer's timestamp (writer's clock, 1 s resolution on the wire)
 * @param owner the holding pod; empty for legacy and ownerless values
 */
public record LockRecord(Instant acquiredAt, Optional<LockOwner> owner) {

  /**
   * @throws NullPointerException if an argument is null
   */
  public LockRecord {
    Objects.requireNonNull(acquiredAt, "acquiredAt");
    Objects.requireNonNull(owner, "owner");
  }

  /**
   * A fresh owner-form record: {@code now} truncated to the second.
   *
   * @throws NullPointerException if an argument is null
   */
  public static LockRecord of(Instant now, LockOwner owner) {
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(owner, "owner");
    return new LockRecord(now.truncatedTo(ChronoUnit.SECONDS), Optional.of(owner));
  }
}
