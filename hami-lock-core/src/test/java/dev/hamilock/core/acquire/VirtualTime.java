package dev.hamilock.core.acquire;

import dev.hamilock.core.WaitClock;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;

/**
 * Virtual time for several threads: a sleeping thread wakes when every registered thread is asleep
 * and its wake-up time is the earliest; time then jumps there. Requests and lock operations take no
 * time. Deterministic once the threads are past their first sleep. Also an {@link InstantSource}
 * for the lock's clock, and a seeded jitter source.
 */
final class VirtualTime implements WaitClock, InstantSource {
  private final Object mu = new Object();
  private final Instant epoch;
  private final Random random;
  private final PriorityQueue<Sleeper> sleepers = new PriorityQueue<>();
  private final List<Long> sleeps = new ArrayList<>();
  private long now;
  private long seq;
  private int active;

  private static final class Sleeper implements Comparable<Sleeper> {
    final long wakeAt;
    final long seq;
    boolean woken;

    Sleeper(long wakeAt, long seq) {
      this.wakeAt = wakeAt;
      this.seq = seq;
    }

    @Override
    public int compareTo(Sleeper o) {
      return wakeAt != o.wakeAt ? Long.compare(wakeAt, o.wakeAt) : Long.compare(seq, o.seq);
    }
  }

  VirtualTime(Instant epoch, long seed) {
    this.epoch = epoch;
    this.random = new Random(seed);
  }

  /** Registers a participant thread (before it starts). */
  void register() {
    synchronized (mu) {
      active++;
    }
  }

  /** The calling participant is done. */
  void deregister() {
    synchronized (mu) {
      active--;
      maybeAdvance();
    }
  }

  @Override
  public long nanoTime() {
    synchronized (mu) {
      return now;
    }
  }

  @Override
  public Instant instant() {
    return epoch.plusNanos(nanoTime());
  }

  @Override
  public void sleepNanos(long nanos) throws InterruptedException {
    synchronized (mu) {
      sleeps.add(nanos);
      Sleeper s = new Sleeper(now + nanos, seq++);
      sleepers.add(s);
      maybeAdvance();
      while (!s.woken) {
        mu.wait();
      }
    }
  }

  @Override
  public long randomBelow(long bound) {
    synchronized (random) {
      return (long) (random.nextDouble() * bound);
    }
  }

  /**
   * @return every sleep requested so far, in order (ns)
   */
  List<Long> sleeps() {
    synchronized (mu) {
      return List.copyOf(sleeps);
    }
  }

  private void maybeAdvance() {
    if (active > 0 && sleepers.size() == active) {
      Sleeper s = sleepers.poll();
      now = Math.max(now, s.wakeAt);
      s.woken = true;
      mu.notifyAll();
    }
  }
}
