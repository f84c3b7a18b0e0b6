package dev.hamilock.core;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HAMi node-lock value codec ({@code pkg/util/nodelock/nodelock.go}: {@code
 * GenerateNodeLockKeyByPod}, {@code ParseNodeLock}): {@code 2026-06-14T15:05:03Z,default,pod-1},
 * RFC 3339 UTC to the second; ownerless: the legacy timestamp alone. Parsing is as lenient as Go's
 * {@code time.RFC3339} and no more (fractions truncated to ns, offsets {@code Z} or {@code
 * ±hh:mm}); a blank namespace or name is an absent owner.
 */
public final class LockRecordCodec {

  /** The separator between timestamp, namespace and name: {@value}. */
  public static final char SEPARATOR = ',';

  private static final Pattern RFC3339 =
      Pattern.compile(
          "(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2}):(\\d{2})(?:\\.(\\d+))?(?:(Z)|([+-])(\\d{2}):(\\d{2}))");

  private static final DateTimeFormatter TIMESTAMP =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'", Locale.ROOT);

  private LockRecordCodec() {}

  /**
   * Formats a record as HAMi writes it.
   *
   * @throws NullPointerException if {@code record} is null
   * @throws IllegalArgumentException if its year is outside 0000–9999
   */
  public static String format(LockRecord record) {
    Objects.requireNonNull(record, "record");
    String timestamp = formatTimestamp(record.acquiredAt());
    return record
        .owner()
        .map(o -> timestamp + SEPARATOR + o.namespace() + SEPARATOR + o.name())
        .orElse(timestamp);
  }

  /**
   * RFC 3339 UTC to the second, as Go's {@code time.Now().UTC().Format(time.RFC3339)}.
   *
   * @throws NullPointerException if {@code instant} is null
   * @throws IllegalArgumentException if its year is outside 0000–9999
   */
  public static String formatTimestamp(Instant instant) {
    Objects.requireNonNull(instant, "instant");
    LocalDateTime t;
    try {
      t = LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          "instant " + instant + " cannot be written as RFC 3339", e);
    }
    checkArgument(
        t.getYear() >= 0 && t.getYear() <= 9999,
        "instant %s is outside years 0000-9999 of RFC 3339",
        instant);
    return TIMESTAMP.format(t);
  }

  /**
   * Parses a node-lock value, verbatim.
   *
   * @throws MalformedLockException naming the value if it has a number of {@code ,}-parts other
   *     than 1 or 3 ({@code malformed lock annotation: expected 3 parts, got <n> from <value>}) or
   *     an invalid timestamp
   * @throws NullPointerException if {@code value} is null
   */
  public static LockRecord parse(String value) throws MalformedLockException {
    Objects.requireNonNull(value, "value");
    if (value.indexOf(SEPARATOR) < 0) {
      return new LockRecord(parseTimestamp(value, value), Optional.empty());
    }
    String[] parts = value.split(String.valueOf(SEPARATOR), -1);
    if (parts.length != 3) {
      throw new MalformedLockException(
          value,
          "malformed lock annotation: expected 3 parts, got " + parts.length + " from " + value);
    }
    Instant acquiredAt = parseTimestamp(parts[0], value);
    Optional<LockOwner> owner =
        parts[1].isBlank() || parts[2].isBlank()
            ? Optional.empty()
            : Optional.of(LockOwner.of(parts[1], parts[2]));
    return new LockRecord(acquiredAt, owner);
  }

  /** Parses an RFC 3339 timestamp with Go's strictness; errors name the whole {@code value}. */
  private static Instant parseTimestamp(String text, String value) throws MalformedLockException {
    Matcher m = RFC3339.matcher(text);
    if (!m.matches()) {
      throw invalidTimestamp(text, value, "not RFC 3339");
    }
    try {
      int nanos = 0;
      if (m.group(7) != null) {
        String digits = m.group(7).length() > 9 ? m.group(7).substring(0, 9) : m.group(7);
        nanos = Integer.parseInt(digits) * (int) Math.pow(10, 9 - digits.length());
      }
      LocalDateTime t =
          LocalDateTime.of(
              Integer.parseInt(m.group(1)),
              Integer.parseInt(m.group(2)),
              Integer.parseInt(m.group(3)),
              Integer.parseInt(m.group(4)),
              Integer.parseInt(m.group(5)),
              Integer.parseInt(m.group(6)),
              nanos);
      long offsetSeconds = 0;
      if (m.group(8) == null) {
        int hours = Integer.parseInt(m.group(10));
        int minutes = Integer.parseInt(m.group(11));
        if (hours > 23 || minutes > 59) {
          throw invalidTimestamp(text, value, "UTC offset out of range");
        }
        offsetSeconds = (hours * 3600L + minutes * 60L) * ("-".equals(m.group(9)) ? -1 : 1);
      }
      long epochSecond = t.toEpochSecond(ZoneOffset.UTC) - offsetSeconds;
      return Instant.ofEpochSecond(epochSecond, nanos);
    } catch (DateTimeException | NumberFormatException e) {
      throw invalidTimestamp(text, value, e.getMessage());
    }
  }

  private static MalformedLockException invalidTimestamp(String text, String value, String why) {
    return new MalformedLockException(
        value,
        "malformed lock annotation: invalid RFC 3339 timestamp \"%s\" (%s) in %s"
            .formatted(text, why, value));
  }
}
