package dev.hamilock.reference;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;
import java.math.BigInteger;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Go text formats HAMi prints or parses: {@code time.Duration.String()}, {@code time.RFC3339}
 * format/parse, and the {@code Error()} text of client-go API errors.
 */
final class GoFormats {

  /** Go's {@code time.RFC3339} layout, quoted in Go's parse error messages. */
  static final String RFC3339_LAYOUT = "2006-01-02T15:04:05Z07:00";

  /*
   * Go's time.Parse(RFC3339, v): four-digit year, two-digit month/day/minute/second, one- or
   * two-digit hour (general parser's stdHour), optional fraction ('.' or ',' then digits) right
   * after the seconds, then upper-case 'Z' or a +hh:mm / -hh:mm offset (colon required).
   */
  private static final Pattern RFC3339 =
      Pattern.compile(
          "(\\d{4})-(\\d{2})-(\\d{2})T(\\d{1,2}):(\\d{2}):(\\d{2})(?:[.,](\\d+))?(Z|([+-])(\\d{2}):(\\d{2}))");

  private GoFormats() {}

  /**
   * Go's {@code time.Duration.String()}: {@code 5m0s}, {@code 2m0s}, {@code 28s}, {@code 100ms},
   * {@code 1h0m0s}, {@code 1.5s}, {@code 0s}.
   */
  static String duration(Duration d) {
    long nanos;
    try {
      nanos = d.toNanos();
    } catch (ArithmeticException e) {
      nanos = d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    if (nanos == 0) {
      return "0s";
    }
    boolean negative = nanos < 0;
    // Long.MIN_VALUE has no positive counterpart; Go prints it via unsigned arithmetic.
    BigInteger u = BigInteger.valueOf(nanos).abs();
    StringBuilder out = new StringBuilder();
    if (u.compareTo(BigInteger.valueOf(1_000_000_000L)) < 0) {
      long v = u.longValue();
      if (v < 1_000L) {
        out.append(v).append("ns");
      } else if (v < 1_000_000L) {
        out.append(fraction(v, 3)).append("µs");
      } else {
        out.append(fraction(v, 6)).append("ms");
      }
    } else {
      BigInteger[] secAndNanos = u.divideAndRemainder(BigInteger.valueOf(1_000_000_000L));
      long totalSeconds = secAndNanos[0].longValue();
      long frac = secAndNanos[1].longValue();
      String seconds = (totalSeconds % 60) + fractionDigits(frac, 9) + "s";
      long totalMinutes = totalSeconds / 60;
      if (totalMinutes > 0) {
        long hours = totalMinutes / 60;
        if (hours > 0) {
          out.append(hours).append('h');
        }
        out.append(totalMinutes % 60).append('m');
      }
      out.append(seconds);
    }
    return negative ? "-" + out : out.toString();
  }

  /** {@code v / 10^digits} with the trimmed fractional part, as Go's fmtFrac prints it. */
  private static String fraction(long v, int digits) {
    long pow = (long) Math.pow(10, digits);
    return (v / pow) + fractionDigits(v % pow, digits);
  }

  private static String fractionDigits(long frac, int digits) {
    if (frac == 0) {
      return "";
    }
    String s = String.format("%0" + digits + "d", frac);
    int end = s.length();
    while (end > 0 && s.charAt(end - 1) == '0') {
      end--;
    }
    return "." + s.substring(0, end);
  }

  /**
   * Go's {@code t.In(zone).Format(time.RFC3339)}: second precision, {@code Z} for a zero offset,
   * otherwise {@code +hh:mm}/{@code -hh:mm} (offset seconds dropped, as Go does).
   */
  static String formatRfc3339(Instant instant, ZoneId zone) {
    ZonedDateTime t = instant.atZone(zone);
    int offsetSeconds = t.getOffset().getTotalSeconds();
    String offset;
    if (offsetSeconds == 0) {
      offset = "Z";
    } else {
      int minutes = Math.abs(offsetSeconds) / 60;
      offset =
          String.format("%s%02d:%02d", offsetSeconds < 0 ? "-" : "+", minutes / 60, minutes % 60);
    }
    return String.format(
        "%04d-%02d-%02dT%02d:%02d:%02d%s",
        t.getYear(),
        t.getMonthValue(),
        t.getDayOfMonth(),
        t.getHour(),
        t.getMinute(),
        t.getSecond(),
        offset);
  }

  /**
   * Go's {@code time.Parse(time.RFC3339, text)}.
   *
   * @throws HamiException with text {@code parsing time "<text>" as "2006-01-02T15:04:05Z07:00":
   *     <reason>} (the reason wording is approximate; Go names the failing layout element)
   */
  static Instant parseRfc3339(String text) throws HamiException {
    Matcher m = RFC3339.matcher(text);
    if (!m.matches()) {
      throw parseError(text, "cannot parse \"" + text + "\" as RFC3339");
    }
    try {
      LocalDateTime local =
          LocalDateTime.of(
              Integer.parseInt(m.group(1)),
              Integer.parseInt(m.group(2)),
              Integer.parseInt(m.group(3)),
              Integer.parseInt(m.group(4)),
              Integer.parseInt(m.group(5)),
              Integer.parseInt(m.group(6)),
              nanosOf(m.group(7)));
      long offsetSeconds = 0;
      if (!"Z".equals(m.group(8))) {
        int hh = Integer.parseInt(m.group(10));
        int mm = Integer.parseInt(m.group(11));
        if (hh > 24 || mm > 60) {
          throw parseError(text, "time zone offset out of range");
        }
        offsetSeconds = (hh * 3600L + mm * 60L) * ("-".equals(m.group(9)) ? -1 : 1);
      }
      return Instant.ofEpochSecond(
          local.toEpochSecond(ZoneOffset.UTC) - offsetSeconds, local.getNano());
    } catch (DateTimeException e) {
      throw parseError(text, e.getMessage());
    }
  }

  private static int nanosOf(String digits) {
    if (digits == null) {
      return 0;
    }
    String nine = (digits + "000000000").substring(0, 9);
    return Integer.parseInt(nine);
  }

  private static HamiException parseError(String text, String reason) {
    return new HamiException(
        "parsing time \"" + text + "\" as \"" + RFC3339_LAYOUT + "\": " + reason);
  }

  /**
   * The text Go's {@code err.Error()} would give: for API errors the {@code message} of the {@code
   * v1.Status} body (client-go's StatusError), otherwise the exception message.
   */
  static String errorText(Throwable error) {
    if (error instanceof ApiException) {
      ApiException api = (ApiException) error;
      Optional<String> statusMessage = statusMessage(api.getResponseBody());
      if (statusMessage.isPresent()) {
        return statusMessage.get();
      }
      if (api.getCode() == 0 && api.getCause() != null && api.getCause().getMessage() != null) {
        return api.getCause().getMessage();
      }
    }
    String message = error.getMessage();
    if (error instanceof ApiException && message != null) {
      // client-java decorates the reason phrase: "Message: <reason>\nHTTP response code: ..."
      String first = message.lines().findFirst().orElse("");
      return first.startsWith("Message: ") ? first.substring("Message: ".length()) : first;
    }
    return message != null ? message : error.getClass().getName();
  }

  private static Optional<String> statusMessage(String body) {
    if (body == null || body.isBlank()) {
      return Optional.empty();
    }
    try {
      JsonElement parsed = JsonParser.parseString(body);
      if (parsed.isJsonObject()
          && parsed.getAsJsonObject().has("message")
          && parsed.getAsJsonObject().get("message").isJsonPrimitive()) {
        String message = parsed.getAsJsonObject().get("message").getAsString();
        return message.isEmpty() ? Optional.empty() : Optional.of(message);
      }
      return Optional.empty();
    } catch (RuntimeException notJson) {
      return Optional.empty();
    }
  }

  /** Minimal JSON string literal (quotes included); Go's Sprintf bodies never need more. */
  static String jsonString(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        default:
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
      }
    }
    return out.append('"').toString();
  }
}
