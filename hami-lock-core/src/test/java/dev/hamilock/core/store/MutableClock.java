package dev.hamilock.core.store;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;

/** A test clock that only moves when told to. */
final class MutableClock implements InstantSource {
  private volatile Instant now;

  MutableClock(String start) {
    this.now = Instant.parse(start);
  }

  @Override
  public Instant instant() {
    return now;
  }

  void advance(Duration d) {
    now = now.plus(d);
  }
}
