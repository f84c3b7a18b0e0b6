package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GoFormatsTest {

  @ParameterizedTest(name = "{0} ms prints {1}")
  @CsvSource({
    "300000, 5m0s",
    "120000, 2m0s",
    "28000, 28s",
    "100, 100ms",
    "3600000, 1h0m0s",
    "1500, 1.5s",
    "0, 0s",
    "300, 300ms",
    "5400000, 1h30m0s",
    "61001, 1m1.001s"
  })
  void durationPrintsLikeGo(long millis, String expected) {
    assertThat(GoFormats.duration(Duration.ofMillis(millis))).isEqualTo(expected);
  }

  @Test
  void subMillisecondDurationsUseGoUnits() {
    assertThat(GoFormats.duration(Duration.ofNanos(999))).isEqualTo("999ns");
    assertThat(GoFormats.duration(Duration.ofNanos(1_500))).isEqualTo("1.5µs");
    assertThat(GoFormats.duration(Duration.ofMillis(-100))).isEqualTo("-100ms");
  }

  @Test
  void formatsRfc3339WithZForUtcAndOffsetOtherwise() {
    Instant t = Instant.parse("2026-08-01T06:00:00.750Z");
    assertThat(GoFormats.formatRfc3339(t, ZoneOffset.UTC)).isEqualTo("2026-08-01T06:00:00Z");
    assertThat(GoFormats.formatRfc3339(t, ZoneId.of("Asia/Shanghai")))
        .isEqualTo("2026-08-01T14:00:00+08:00");
    assertThat(GoFormats.formatRfc3339(t, ZoneOffset.ofHoursMinutes(-3, -30)))
        .isEqualTo("2026-08-01T02:30:00-03:30");
  }

  @ParameterizedTest(name = "{0} parses to {1}")
  @CsvSource({
    "2026-08-01T06:00:00Z, 2026-08-01T06:00:00Z",
    "2026-07-03T15:35:10+08:00, 2026-07-03T07:35:10Z",
    "2026-08-01T06:00:00.5Z, 2026-08-01T06:00:00.500Z",
    "2026-08-01T06:00:00.123456789123Z, 2026-08-01T06:00:00.123456789Z",
    "2026-08-01T6:00:00Z, 2026-08-01T06:00:00Z"
  })
  void parsesWhatGoAccepts(String text, String instant) throws HamiException {
    assertThat(GoFormats.parseRfc3339(text)).isEqualTo(Instant.parse(instant));
  }

  @ParameterizedTest(name = "{0} is rejected")
  @CsvSource({
    "lock",
    "2026-08-01t06:00:00Z",
    "2026-08-01T06:00:00z",
    "2026-08-01T06:00:00+0800",
    "2026-02-30T06:00:00Z",
    "2026-08-01T24:00:00Z",
    "2026-08-01T06:00:60Z",
    "2026-08-01 06:00:00Z",
    "2026-08-01T06:00:00",
    "2026-08-01T06:00:00Zjunk",
    "26-08-01T06:00:00Z"
  })
  void rejectsWhatGoRejects(String text) {
    assertThatThrownBy(() -> GoFormats.parseRfc3339(text))
        .isInstanceOf(HamiException.class)
        .hasMessageStartingWith("parsing time \"" + text + "\" as \"2006-01-02T15:04:05Z07:00\": ");
  }

  @Test
  void errorTextPrefersTheStatusMessageLikeClientGo() {
    ApiException conflict =
        new ApiException(
            "Conflict",
            409,
            null,
            "{\"kind\":\"Status\",\"message\":\"Operation cannot be fulfilled on nodes \\\"n1\\\"\",\"code\":409}");
    assertThat(GoFormats.errorText(conflict))
        .isEqualTo("Operation cannot be fulfilled on nodes \"n1\"");
    assertThat(
            GoFormats.errorText(new ApiException("Internal Server Error", 500, null, "not json")))
        .isEqualTo("Internal Server Error");
    assertThat(GoFormats.errorText(new HamiException("node n1 is locked")))
        .isEqualTo("node n1 is locked");
  }
}
