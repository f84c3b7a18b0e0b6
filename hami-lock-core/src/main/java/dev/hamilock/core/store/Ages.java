package dev.hamilock.core.store;

import dev.hamilock.core.GoDuration;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * Saturating age arithmetic for lock timestamps, which come from other machines' clocks and may be
 * any well-formed RFC 3339 instant (year 0001 to 9999): nothing here throws.
 */
final class Ages {

  private Ages() {}

  /** {@return {@code to - from}, clamped to Go's duration range (as Go's {@code Time.Sub})} */
  static Duration between(Instant from, Instant to) {
    Duration d;
    try {
      d = Duration.between(from, to);
    } catch (ArithmeticException e) {
      return from.isBefore(to) ? GoDuration.MAX : GoDuration.MIN;
    }
    return GoDuration.saturate(d);
  }

  /**
   * The clock-skew rule (see {@link StoreNodeLock}): expired only when this process first saw the
   * value more than one lock timeout ago <em>and</em> either its timestamp is older than the lock
   * timeout (HAMi's rule, strictly greater) or it was first seen more than two lock timeouts ago —
   * a timestamp may keep a lock alive at most one timeout longer than first sight says, however far
   * ahead the writer's clock runs.
   *
   * @param stampAge {@code now - stamp}, saturated
   * @param seenFor {@code now - first seen}, saturated
   * @return whether the value is expired
   */
  static boolean expired(Duration stampAge, Duration seenFor, Duration lockTimeout) {
    if (seenFor.compareTo(lockTimeout) <= 0) {
      return false;
    }
    return stampAge.compareTo(lockTimeout) > 0
        || seenFor.compareTo(GoDuration.saturate(lockTimeout.multipliedBy(2))) > 0;
  }

  /** {@return Go text of {@code d} at millisecond precision; never throws} */
  static String format(Duration d) {
    return GoDuration.formatSaturated(GoDuration.saturate(d).truncatedTo(ChronoUnit.MILLIS));
  }
}
