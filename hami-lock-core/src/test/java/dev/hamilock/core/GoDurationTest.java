package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class GoDurationTest {

  @ParameterizedTest(name = "parse({0}) = {1} ns")
  @CsvSource(
      delimiter = '|',
      value = {
        "300s      | 300000000000",
        "5m        | 300000000000",
        "1h30m     | 5400000000000",
        "1m30.5s   | 90500000000",
        "28s       | 28000000000",
        "0         | 0",
        "+0        | 0",
        "-0        | 0",
        "0s        | 0",
        "100ms     | 100000000",
        "1.5h      | 5400000000000",
        "1us       | 1000",
        "1\u00b5s  | 1000",
        "1\u03bcs  | 1000",
        "7ns       | 7",
        ".5s       | 500000000",
        "1.s       | 1000000000",
        "-2s       | -2000000000",
        "+2s       | 2000000000",
        "1h1m1s1ms1us1ns | 3661001001001",
        "2562047h47m16.854775807s | 9223372036854775807",
        "-2562047h47m16.854775808s | -9223372036854775808",
        "0.3333333333333333333h | 1200000000000",
        "1.0000000000000000000000001s | 1000000000",
      })
  void parsesGoText(String text, long nanos) {
    assertThat(GoDuration.parse(text)).isEqualTo(Duration.ofNanos(nanos));
  }

  @ParameterizedTest(name = "parse(\"{0}\") is rejected")
  @ValueSource(
      strings = {
        "",
        "-",
        "+",
        "s",
        "5",
        "300",
        "5 m",
        " 5m",
        "5m ",
        "5M",
        "1d",
        "1.5",
        ".",
        ".s",
        "-.s",
        "1..5s",
        "5mm",
        "ten",
        "1e3s",
        "0x10s",
        "1h-1m",
        "∞",
        "2562047h47m16.854775808s",
        "9223372036854775808ns",
        "99999999999999999999ns"
      })
  void rejectsWhatGoRejects(String text) {
    assertThatThrownBy(() -> GoDuration.parse(text))
        .isInstanceOf(InvalidGoDurationException.class)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("\"" + text + "\"")
        .satisfies(e -> assertThat(((InvalidGoDurationException) e).value()).isEqualTo(text));
  }

  @ParameterizedTest(name = "format({0} ns) = {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "0             | 0s",
        "1             | 1ns",
        "999           | 999ns",
        "1000          | 1\u00b5s",
        "1500          | 1.5\u00b5s",
        "100000000     | 100ms",
        "1100000       | 1.1ms",
        "28000000000   | 28s",
        "300000000000  | 5m0s",
        "3600000000000 | 1h0m0s",
        "90500000000   | 1m30.5s",
        "5400000000000 | 1h30m0s",
        "3661000000001 | 1h1m1.000000001s",
        "-2000000000   | -2s",
        "-1500         | -1.5\u00b5s",
        "9223372036854775807  | 2562047h47m16.854775807s",
        "-9223372036854775808 | -2562047h47m16.854775808s",
      })
  void formatsLikeGo(long nanos, String text) {
    assertThat(GoDuration.format(Duration.ofNanos(nanos))).isEqualTo(text);
  }

  @Test
  void formatRejectsDurationsOutsideGoRange() {
    assertThatThrownBy(() -> GoDuration.format(Duration.ofDays(300 * 365)))
        .isInstanceOf(InvalidGoDurationException.class)
        .hasMessageContaining("PT");
  }

  @Test
  void nullIsRejected() {
    assertThatThrownBy(() -> GoDuration.parse(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> GoDuration.format(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void formatThenParseIsIdentity() {
    Props.qt(500)
        .forAll(longs().all())
        .checkAssert(
            nanos -> {
              Duration d = Duration.ofNanos(nanos);
              assertThat(GoDuration.parse(GoDuration.format(d))).isEqualTo(d);
            });
  }

  @Test
  void formatThenParseIsIdentityForSchedulerScaleValues() {
    Props.qt(300)
        .forAll(longs().between(0, 86_400_000L))
        .checkAssert(
            millis -> {
              Duration d = Duration.ofMillis(millis);
              assertThat(GoDuration.parse(GoDuration.format(d))).isEqualTo(d);
            });
  }

  @Test
  void parseOfArbitraryTextSucceedsOrThrowsTheTypedException() {
    Props.qt(500)
        .forAll(Gens.anyText(255))
        .checkAssert(
            text -> {
              try {
                GoDuration.parse(text);
              } catch (InvalidGoDurationException e) {
                assertThat(e.value()).isEqualTo(text);
              }
            });
  }
}
