package dev.hamilock.bind.testing;

import static dev.hamilock.core.internal.Checks.checkArgument;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The injected clock of one scenario run: the system UTC clock plus an offset that only grows
 * ({@link #jump}). The locks of a run read it, so a simulated device plugin can stall "past the
 * lock timeout" in a few real milliseconds. Thread-safe.
 */
public final class ScenarioClock implements InstantSource {
  private final InstantSource base;
  private final AtomicLong offsetNanos = new AtomicLong();

  /** A clock at system UTC time, no offset. */
  public ScenarioClock() {
    this(Clock.systemUTC());
  }

  /**
   * @param base the underlying time source
   */
  public ScenarioClock(InstantSource base) {
    this.base = Objects.requireNonNull(base, "base");
  }

  @Override
  public Instant instant() {
    return base.instant().plusNanos(offsetNanos.get());
  }

  /**
   * Moves the clock forward.
   *
   * @param d how far; not negative
   * @throws NullPointerException if {@code d} is null
   * @throws IllegalArgumentException if {@code d} is negative
   */
  public void jump(Duration d) {
    Objects.requireNonNull(d, "jump");
    checkArgument(!d.isNegative(), "jump must not be negative: %s", d);
    offsetNanos.addAndGet(d.toNanos());
  }

  /**
   * @return the total offset jumped so far
   */
  public Duration offset() {
    return Duration.ofNanos(offsetNanos.get());
  }
}
