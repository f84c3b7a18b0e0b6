package dev.hamilock.reference;

import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;

/**
 * A parsed {@code hami.io/mutex.lock} value, following HAMi's {@code ParseNodeLock}, {@code
 * GenerateNodeLockKeyByPod} and the textual owner test of {@code pkg/util/nodelock/nodelock.go}
 * (spec §1.2).
 *
 * <p>Grammar: owner form {@code <RFC3339>,<namespace>,<name>} or legacy form {@code <RFC3339>} (no
 * comma). Legacy values parse with empty namespace and name; so does {@code T,,}.
 *
 * @param lockTime the writer's timestamp (second precision on write; fractions accepted on read)
 * @param namespace the owner pod's namespace, {@code ""} for legacy or empty-owner values
 * @param name the owner pod's name, {@code ""} for legacy or empty-owner values
 */
public record HamiLockValue(Instant lockTime, String namespace, String name) {

  /** The node annotation key every HAMi vendor uses (the lock name argument is ignored). */
  public static final String NODE_LOCK_KEY = "hami.io/mutex.lock";

  /** HAMi's {@code NodeLockSep}. */
  public static final String SEPARATOR = ",";

  /**
   * @throws NullPointerException if any component is {@code null}
   */
  public HamiLockValue {
    Objects.requireNonNull(lockTime, "lockTime");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  /**
   * HAMi's {@code ParseNodeLock}: no comma ⇒ the whole value is an RFC3339 time with empty owner;
   * otherwise exactly three comma-separated parts, the first an RFC3339 time. Empty namespace/name
   * are accepted.
   *
   * @param value the raw annotation value
   * @return the parsed value
   * @throws HamiException {@code malformed lock annotation: expected 3 parts, got <N> from <value>}
   *     for a comma-containing value with N ≠ 3 parts, or Go's {@code parsing time ...} error for a
   *     bad timestamp (never contention)
   */
  public static HamiLockValue parse(String value) throws HamiException {
    Objects.requireNonNull(value, "value");
    if (!value.contains(SEPARATOR)) {
      return new HamiLockValue(GoFormats.parseRfc3339(value), "", "");
    }
    String[] parts = value.split(SEPARATOR, -1);
    if (parts.length != 3) {
      throw new HamiException(
          "malformed lock annotation: expected 3 parts, got " + parts.length + " from " + value);
    }
    return new HamiLockValue(GoFormats.parseRfc3339(parts[0]), parts[1], parts[2]);
  }

  /**
   * HAMi's {@code GenerateNodeLockKeyByPod} for a pod: {@code <now in RFC3339>,<namespace>,<name>},
   * e.g. {@code 2026-08-01T06:00:00Z,ns,pod-a}.
   *
   * @param now the writer's wall clock
   * @param zone the writer's zone (HAMi prints its local zone; UTC prints {@code Z})
   * @param namespace pod namespace
   * @param name pod name
   * @return the owner-form value
   */
  public static String format(Instant now, ZoneId zone, String namespace, String name) {
    return GoFormats.formatRfc3339(now, zone) + SEPARATOR + namespace + SEPARATOR + name;
  }

  /**
   * HAMi's {@code GenerateNodeLockKeyByPod(nil)}: the bare timestamp (legacy form, as written by
   * HAMi ≤ v2.3).
   *
   * @param now the writer's wall clock
   * @param zone the writer's zone
   * @return e.g. {@code 2026-08-01T06:00:00Z}
   */
  public static String formatLegacy(Instant now, ZoneId zone) {
    return GoFormats.formatRfc3339(now, zone);
  }

  /**
   * HAMi's textual owner test: the value contains {@code ,} and ends with {@code
   * ,<namespace>,<name>}. The timestamp is not compared and need not be valid ({@code
   * lock-values,default,pod-gpu} is owned by {@code default/pod-gpu}).
   *
   * @param value raw annotation value
   * @param namespace pod namespace
   * @param name pod name
   * @return whether the pod owns the value textually
   */
  public static boolean isOwnedBy(String value, String namespace, String name) {
    return value.contains(SEPARATOR) && value.endsWith(SEPARATOR + namespace + SEPARATOR + name);
  }
}
