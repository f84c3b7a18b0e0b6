package dev.hamilock.k8s;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

/** A settable clock for lock timestamps and expiry. */
final class TestClock implements InstantSource {
  private final AtomicReference<Instant> now;

  TestClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  void advance(Duration d) {
    now.updateAndGet(i -> i.plus(d));
  }

  void set(Instant i) {
    now.set(i);
  }
}
