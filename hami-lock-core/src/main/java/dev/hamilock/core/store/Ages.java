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

  /** The clock-skew rule of {@link LockJudgement} (rule 3), from saturated ages. */
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
