package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.testing.generators.Gens;
import dev.hamilock.testing.generators.Props;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.quicktheories.core.Gen;

/** Spec §1.2 and vectors V01–V07 (HAMi pkg/util/nodelock/nodelock_test.go, util_test.go). */
class LockRecordCodecTest {

  @Test
  void v01ParsesOwnerForm() throws Exception {
    LockRecord r = LockRecordCodec.parse("2026-08-01T06:00:00Z,ns,pod-a");
    assertThat(r.acquiredAt()).isEqualTo(Instant.parse("2026-08-01T06:00:00Z"));
    assertThat(r.owner()).contains(LockOwner.of("ns", "pod-a"));
  }

  @Test
  void v02ParsesLegacyFormWithOffset() throws Exception {
    LockRecord r = LockRecordCodec.parse("2026-07-03T15:35:10+08:00");
    assertThat(r.acquiredAt()).isEqualTo(Instant.parse("2026-07-03T07:35:10Z"));
    assertThat(r.owner()).isEmpty();
  }

  @Test
  void v03RejectsCommaLessGarbage() {
    assertThatThrownBy(() -> LockRecordCodec.parse("lock"))
        .isInstanceOf(MalformedLockException.class)
        .hasMessageContaining("lock")
        .satisfies(e -> assertThat(((MalformedLockException) e).value()).isEqualTo("lock"));
  }

  @Test
  void v04RejectsWrongPartCountWithHamiText() {
    assertThatThrownBy(() -> LockRecordCodec.parse("a,b"))
        .isInstanceOf(MalformedLockException.class)
        .hasMessage("malformed lock annotation: expected 3 parts, got 2 from a,b");
    assertThatThrownBy(() -> LockRecordCodec.parse("junk,foo,ns,name"))
        .hasMessage("malformed lock annotation: expected 3 parts, got 4 from junk,foo,ns,name");
  }

  @Test
  void invalidTimestampInOwnerFormNamesTheValue() {
    assertThatThrownBy(() -> LockRecordCodec.parse("lock-values,default,pod-gpu"))
        .isInstanceOf(MalformedLockException.class)
        .hasMessageContaining("lock-values,default,pod-gpu");
  }

  @Test
  void v05EmptyOwnerPartsParseToAbsentOwner() throws Exception {
    LockRecord r = LockRecordCodec.parse("2024-01-01T00:00:00Z,,");
    assertThat(r.acquiredAt()).isEqualTo(Instant.parse("2024-01-01T00:00:00Z"));
    assertThat(r.owner()).isEmpty();
    assertThat(LockRecordCodec.parse("2024-01-01T00:00:00Z,ns,").owner()).isEmpty();
    assertThat(LockRecordCodec.parse("2024-01-01T00:00:00Z, ,pod").owner()).isEmpty();
  }

  @Test
  void v06WritesOwnerFormAndLegacyForm() {
    Instant at = Instant.parse("2026-08-01T06:00:00Z");
    assertThat(LockRecordCodec.format(LockRecord.of(at, LockOwner.of("ns", "pod-a"))))
        .isEqualTo("2026-08-01T06:00:00Z,ns,pod-a");
    assertThat(LockRecordCodec.format(new LockRecord(at, Optional.empty())))
        .isEqualTo("2026-08-01T06:00:00Z");
  }

  @Test
  void writesUtcSecondPrecisionUpperCase() {
    Instant at = Instant.parse("2026-06-14T15:05:03.987654321Z");
    assertThat(LockRecordCodec.format(LockRecord.of(at, LockOwner.of("default", "gang-pod-1"))))
        .isEqualTo("2026-06-14T15:05:03Z,default,gang-pod-1");
    // LockRecord.of truncates; a record built directly still writes whole seconds
    assertThat(LockRecordCodec.format(new LockRecord(at, Optional.empty())))
        .isEqualTo("2026-06-14T15:05:03Z");
  }

  @Test
  void v07JoinsNamespaceAndName() {
    LockOwner o = LockOwner.of("test-namespace", "test-pod");
    assertThat(o.join("-")).isEqualTo("test-namespace-test-pod");
    assertThat(o.join("")).isEqualTo("test-namespacetest-pod");
    assertThat(o.join("@@@")).isEqualTo("test-namespace@@@test-pod");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "2026-08-01T06:00:00.5Z,ns,p", "2026-08-01T06:00:00.123456789Z,ns,p",
        "2026-08-01T06:00:00.1234567891234Z,ns,p", "2026-08-01T08:00:00+02:00,ns,p",
        "2026-08-01T01:30:00-04:30,ns,p", "2026-08-01T06:00:00+00:00,ns,p"
      })
  void acceptsFractionsAndOffsetsLikeGo(String value) throws Exception {
    LockRecord r = LockRecordCodec.parse(value);
    assertThat(r.owner()).contains(LockOwner.of("ns", "p"));
    assertThat(r.acquiredAt())
        .isBetween(Instant.parse("2026-08-01T06:00:00Z"), Instant.parse("2026-08-01T06:00:01Z"));
  }

  @Test
  void fractionIsKeptToTheNanosecondOnRead() throws Exception {
    assertThat(LockRecordCodec.parse("2026-08-01T06:00:00.123456789Z").acquiredAt())
        .isEqualTo(Instant.parse("2026-08-01T06:00:00.123456789Z"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "2026-08-01t06:00:00Z",
        "2026-08-01T06:00:00z",
        "2026-08-01 06:00:00Z",
        "2026-08-01T06:00:00",
        "2026-08-01T06:00:00+0200",
        "2026-08-01T06:00:00+02",
        "2026-08-01T06:00Z",
        "26-08-01T06:00:00Z",
        "2026-13-01T06:00:00Z",
        "2026-02-30T06:00:00Z",
        "2026-08-01T24:00:00Z",
        "2026-08-01T06:60:00Z",
        "2026-08-01T06:00:60Z",
        "2026-08-01T06:00:00.Z",
        "2026-08-01T06:00:00+24:00",
        " 2026-08-01T06:00:00Z",
        "2026-08-01T06:00:00Z ",
        "",
        "٢٠٢٦-08-01T06:00:00Z"
      })
  void rejectsWhatGoRfc3339Rejects(String timestamp) {
    assertThatThrownBy(() -> LockRecordCodec.parse(timestamp))
        .isInstanceOf(MalformedLockException.class);
    assertThatThrownBy(() -> LockRecordCodec.parse(timestamp + ",ns,p"))
        .isInstanceOf(MalformedLockException.class)
        .hasMessageContaining(timestamp + ",ns,p");
  }

  @Test
  void nullArgumentsAreIllegal() {
    assertThatThrownBy(() -> LockRecordCodec.parse(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("value");
    assertThatThrownBy(() -> LockRecordCodec.format(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("record");
  }

  @Test
  void formatRejectsYearsOutsideRfc3339() {
    assertThatThrownBy(
            () -> LockRecordCodec.formatTimestamp(Instant.parse("+10000-01-01T00:00:00Z")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("0000-9999");
  }

  /**
   * 300 records: any second of years 0000–9999; owner (80 %) of two [a-z0-9.-]{1,20} names, or
   * none.
   */
  @Test
  void formatThenParseIsIdentityOnCanonicalRecords() {
    Props.qt(300)
        .forAll(canonicalRecords())
        .checkAssert(
            record ->
                Props.unchecked(
                    () -> {
                      String text = LockRecordCodec.format(record);
                      assertThat(LockRecordCodec.parse(text)).isEqualTo(record);
                      assertThat(LockRecordCodec.format(LockRecordCodec.parse(text)))
                          .isEqualTo(text);
                    }));
  }

  /** 500 values: free text up to 40 characters, or up to 8 lock-value pieces glued together. */
  @Test
  void parseOfArbitraryStringsSucceedsOrThrowsOnlyMalformed() {
    Props.qt(500)
        .forAll(Gens.lockLikeValues())
        .checkAssert(
            value -> {
              try {
                LockRecord r = LockRecordCodec.parse(value);
                assertThat(r.acquiredAt()).isNotNull();
              } catch (MalformedLockException e) {
                assertThat(e.value()).isEqualTo(value);
                assertThat(e.getMessage()).contains(value);
              }
            });
  }

  static Gen<LockRecord> canonicalRecords() {
    Gen<String> names = Gens.names(1, 20);
    Gen<Optional<LockOwner>> owners = names.zip(names, LockOwner::of).toOptionals(20);
    return Gens.rfc3339Seconds().zip(owners, LockRecord::new);
  }
}
