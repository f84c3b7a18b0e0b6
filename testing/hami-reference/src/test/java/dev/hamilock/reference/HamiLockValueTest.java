package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** Spec §8 V01–V06 and the textual owner rule of §1.2 (HAMi nodelock_test.go). */
class HamiLockValueTest {

  @Test
  void v01ParsesOwnerForm() throws HamiException {
    assertThat(HamiLockValue.parse("2026-08-01T06:00:00Z,ns,pod-a"))
        .isEqualTo(new HamiLockValue(Instant.parse("2026-08-01T06:00:00Z"), "ns", "pod-a"));
  }

  @Test
  void v02ParsesLegacyFormWithEmptyOwner() throws HamiException {
    assertThat(HamiLockValue.parse("2026-07-03T15:35:10+08:00"))
        .isEqualTo(new HamiLockValue(Instant.parse("2026-07-03T07:35:10Z"), "", ""));
  }

  @Test
  void v03AndV04RejectBadValuesWithGoText() {
    assertThatThrownBy(() -> HamiLockValue.parse("lock"))
        .isInstanceOf(HamiException.class)
        .isNotInstanceOf(HamiLockContentionException.class);
    assertThatThrownBy(() -> HamiLockValue.parse("a,b"))
        .hasMessage("malformed lock annotation: expected 3 parts, got 2 from a,b");
    assertThatThrownBy(() -> HamiLockValue.parse("junk,foo,ns,name"))
        .hasMessage("malformed lock annotation: expected 3 parts, got 4 from junk,foo,ns,name");
    assertThatThrownBy(() -> HamiLockValue.parse("bad,ns,pod"))
        .hasMessageStartingWith("parsing time \"bad\"");
  }

  @Test
  void v05AcceptsEmptyOwner() throws HamiException {
    assertThat(HamiLockValue.parse("2024-01-01T00:00:00Z,,"))
        .isEqualTo(new HamiLockValue(Instant.parse("2024-01-01T00:00:00Z"), "", ""));
  }

  @Test
  void v06GeneratesOwnerAndLegacyForms() {
    Instant now = Instant.parse("2026-08-01T06:00:00Z");
    assertThat(HamiLockValue.format(now, ZoneOffset.UTC, "ns", "pod-a"))
        .isEqualTo("2026-08-01T06:00:00Z,ns,pod-a");
    assertThat(HamiLockValue.formatLegacy(now, ZoneOffset.UTC)).isEqualTo("2026-08-01T06:00:00Z");
  }

  @Test
  void ownershipIsTextualAndIgnoresTheTimestamp() {
    assertThat(HamiLockValue.isOwnedBy("lock-values,default,pod-gpu", "default", "pod-gpu"))
        .isTrue();
    assertThat(HamiLockValue.isOwnedBy("junk,foo,ns,name", "ns", "name")).isTrue();
    assertThat(HamiLockValue.isOwnedBy("2026-08-01T06:00:00Z,ns,pod-a", "ns", "pod-b")).isFalse();
    assertThat(HamiLockValue.isOwnedBy("2026-08-01T06:00:00Z,xns,pod-a", "ns", "pod-a")).isFalse();
    assertThat(HamiLockValue.isOwnedBy("2026-08-01T06:00:00Z", "", "")).isFalse();
  }

  /**
   * 200 examples: namespace [A-Za-z0-9]{1,20}, name [A-Za-z]{1,20}, any long folded into years
   * 1970–9999.
   */
  @Test
  void formatThenParseRoundTripsOwnerAndSecond() {
    Props.qt(200)
        .forAll(
            Gens.strings(Gens.ALPHA + Gens.DIGITS, 1, 20),
            Gens.strings(Gens.ALPHA, 1, 20),
            longs().all())
        .checkAssert((ns, name, seconds) -> Props.unchecked(() -> roundTrips(ns, name, seconds)));
  }

  private static void roundTrips(String ns, String name, long seconds) throws HamiException {
    Instant now = Instant.ofEpochSecond(Math.floorMod(seconds, 253_402_200_000L));
    String value = HamiLockValue.format(now, ZoneOffset.ofHours(8), ns, name);
    assertThat(HamiLockValue.parse(value)).isEqualTo(new HamiLockValue(now, ns, name));
    assertThat(HamiLockValue.isOwnedBy(value, ns, name)).isTrue();
  }
}
