package dev.hamilock.core.acquire;

import dev.hamilock.core.WaitClock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * Virtual time for one thread: a sleep advances the clock at once by what was asked plus a scripted
 * oversleep (a thread woken late by a loaded machine), and the jitter is scripted too. Nothing else
 * moves the clock, so every attempt count on it is a logical fact, never wall-clock luck. Every
 * timer ({@link #schedule}: a wait without a signal, or for a wake-up that nobody can hand on one
 * thread) is such a sleep, recorded, then fires: the clock of the acquirer and of the {@code
 * FairReleaseQueue} its test signal wraps.
 */
final class SteppedClock implements WaitClock {
  private final LongUnaryOperator jitter;
  private final LongUnaryOperator oversleep;
  private final List<Long> sleeps = new ArrayList<>();

  /** Where the clock starts: not zero ({@link System#nanoTime()} has an arbitrary origin too). */
  static final long ORIGIN = 1_000_000_000_000L;

  private long now = ORIGIN;

  /**
   * @param jitter bound → value in {@code [0, bound)}
   * @param oversleep asked nanos → extra nanos the sleeper is late by
   */
  SteppedClock(LongUnaryOperator jitter, LongUnaryOperator oversleep) {
    this.jitter = jitter;
    this.oversleep = oversleep;
  }

  /** Always the largest jitter (each wait its full bound), never late. */
  static SteppedClock maxJitter() {
    return new SteppedClock(bound -> bound - 1, asked -> 0);
  }

  @Override
  public synchronized long nanoTime() {
    return now;
  }

  @Override
  public synchronized void sleepNanos(long nanos) {
    sleeps.add(nanos);
    now += nanos + oversleep.applyAsLong(nanos);
  }

  /** Lets time pass as a wait on a release signal would (no sleep recorded). */
  synchronized void advance(long nanos) {
    now += nanos + oversleep.applyAsLong(nanos);
  }

  @Override
  public long randomBelow(long bound) {
    long v = jitter.applyAsLong(bound);
    if (v < 0 || v >= bound) {
      throw new IllegalStateException("scripted jitter " + v + " outside [0, " + bound + ")");
    }
    return v;
  }

  /**
   * @return nanos since {@link #ORIGIN}
   */
  synchronized long elapsed() {
    return now - ORIGIN;
  }

  /**
   * @return the sleeps asked for so far, in order (ns)
   */
  synchronized List<Long> sleeps() {
    return List.copyOf(sleeps);
  }
}
