package dev.hamilock.core;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;

/**
 * A parsed HAMi node-lock value: when the lock was taken and, for the owner form, by which pod.
 *
 * <p>Wire forms (HAMi {@code pkg/util/nodelock/nodelock.go}, see {@link LockRecordCodec}): owner
 * form {@code 2026-06-14T15:05:03Z,default,gang-pod-1} (owner present) and the legacy
 * timestamp-only form {@code 2026-07-03T15:35:10+08:00} written by HAMi &le; v2.3 (owner absent). A
 * value whose namespace or name part is blank ({@code 2024-01-01T00:00:00Z,,}) names no pod and
 * also parses to an absent owner: like HAMi, such a record is never re-entrant and never checked
 * for a dangling owner, and the device plugin cannot find a pod from it.
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
   * A fresh owner-form record as this library writes it: {@code now} truncated to the second.
   *
   * @param now the writer's current instant
   * @param owner the acquiring pod
   * @throws NullPointerException if an argument is null
   */
  public static LockRecord of(Instant now, LockOwner owner) {
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(owner, "owner");
    return new LockRecord(now.truncatedTo(ChronoUnit.SECONDS), Optional.of(owner));
  }
}
