package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The first-sighting memo behind the clock-skew rule and malformed-value expiry. */
class FirstSightingsTest {

  private static final Instant T0 = Instant.parse("2026-08-01T06:00:00Z");
  private static final Instant T1 = T0.plusSeconds(60);
  private static final Instant T2 = T0.plusSeconds(120);

  private final FirstSightings sightings = new FirstSightings(2);

  @Test
  void theSameValueKeepsItsFirstSighting() {
    assertThat(sightings.firstSeen("n1", "a", T0)).isEqualTo(T0);
    assertThat(sightings.firstSeen("n1", "a", T1)).isEqualTo(T0);
  }

  @Test
  void anotherValueOnTheNodeStartsAfreshAndTheOldTextCountsAfreshWhenItReturns() {
    sightings.firstSeen("n1", "a", T0);
    assertThat(sightings.firstSeen("n1", "b", T1)).isEqualTo(T1);
    assertThat(sightings.firstSeen("n1", "a", T2)).as("a new appearance of a").isEqualTo(T2);
  }

  @Test
  void aFreeNodeForgetsItsValue() {
    sightings.firstSeen("n1", "a", T0);
    sightings.nodeFree("n1");
    assertThat(sightings.firstSeen("n1", "a", T1)).isEqualTo(T1);
  }

  @Test
  void goneForgetsOnlyTheValueNamed() {
    sightings.firstSeen("n1", "a", T0);
    sightings.gone("n1", "other");
    assertThat(sightings.firstSeen("n1", "a", T1)).as("another value's departure").isEqualTo(T0);
    sightings.gone("n1", "a");
    assertThat(sightings.firstSeen("n1", "a", T2)).isEqualTo(T2);
  }

  @Test
  void nodesAreIndependentAndTheLeastRecentlyUsedIsDropped() {
    sightings.firstSeen("n1", "a", T0);
    sightings.firstSeen("n2", "a", T1);
    assertThat(sightings.firstSeen("n1", "a", T2)).isEqualTo(T0);
    sightings.firstSeen("n3", "a", T2); // capacity 2: n2 is the least recently used
    assertThat(sightings.firstSeen("n1", "a", T2)).isEqualTo(T0);
    assertThat(sightings.firstSeen("n2", "a", T2))
        .as("dropped: counted afresh (only delays)")
        .isEqualTo(T2);
  }
}
