package dev.hamilock.core;

import static dev.hamilock.core.internal.Checks.saturatedNanos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * The per-node wake-up queue every backend feeds: each {@link #released(String)} hands one wake-up
 * to the oldest open {@link Waiter} of the node without one, waiting or mid-attempt (no herd,
 * HAMi#2589; no lost wake-up); {@link #wakeAll(String)} is for a deleted node. A waiter closed with
 * an unconsumed wake-up passes it on; one handed to its pending wait is that wait's even if the
 * close comes before the delivery ({@link Waiter#close()}). A node's entry goes with its last
 * waiter. Only releases wake: a lock passing between holders cannot make it free. A release that
 * came while this process's attempt was in flight is handed on again when that attempt ends held:
 * its answer may predate the release, and the waiter woken by it may have been refused the attempt
 * slot.
 *
 * <p><b>Turn.</b> After {@link #TURN} (5 s) of continuous waiters here, the next release leaves the
 * lock free for {@link #LEAVE} (200 ms, two polls of HAMi's scheduler, {@code
 * pkg/scheduler/scheduler.go}, which would otherwise starve); meanwhile {@link #leavingTurn} makes
 * this process's attempts contention without a request.
 *
 * <p><b>Lost-race pause.</b> Once an attempt here met another process's value ({@link
 * Attempt.End#HELD_ELSEWHERE}), each release is left free for 2–4 averaged round trips of this
 * process (first guess 10 ms; 1 ms to {@link #MAX_PAUSE}), so the last winner goes first and the
 * other schedulers do not all send a losing compare-and-set (issue 25 item 4). A win ends it; it is
 * skipped once the oldest waiter here waited a {@link #TURN}.
 *
 * <p>Reliability ({@link #isReliable(String)}) is the feeder's to tell. Thread-safe.
 */
public final class FairReleaseQueue implements LockReleaseSignal {

  /** How long a node's lock passes between this queue's waiters before it leaves a turn: 5 s. */
  public static final Duration TURN = Duration.ofSeconds(5);

  /** How long the lock is left to other schedulers at each turn: 200 ms, two of HAMi's polls. */
  public static final Duration LEAVE = Duration.ofMillis(200);

  /** The longest pause after a release that a lost race causes: 100 ms. */
  public static final Duration MAX_PAUSE = Duration.ofMillis(100);

  private static final long FIRST_ROUND_TRIP = Duration.ofMillis(10).toNanos();
  private static final long MIN_PAUSE = Duration.ofMillis(1).toNanos();

  private final ConcurrentMap<String, NodeQueue> nodes = new ConcurrentHashMap<>();
  private volatile long roundTrip = FIRST_ROUND_TRIP; // of attempts that met the store, ns
  private volatile boolean measured; // roundTrip is from a measured attempt, not the first guess
  private final Predicate<String> reliable;
  private final WaitClock clock;

  private FairReleaseQueue(Predicate<String> reliable, WaitClock clock) {
    this.reliable = reliable;
    this.clock = clock;
  }

  /** A queue that never calls itself reliable, on the system clock. */
  public static FairReleaseQueue create() {
    return create(node -> false, WaitClock.SYSTEM);
  }

  /**
   * A queue whose {@link #isReliable(String)} is {@code reliable}'s (cheap, no I/O).
   *
   * @throws NullPointerException if an argument is null
   */
  public static FairReleaseQueue create(Predicate<String> reliable, WaitClock clock) {
    Objects.requireNonNull(reliable, "reliable");
    Objects.requireNonNull(clock, "clock");
    return new FairReleaseQueue(reliable, clock);
  }

  @Override
  public Waiter join(String node) {
    Objects.requireNonNull(node, "node");
    while (true) {
      NodeQueue q = nodes.computeIfAbsent(node, NodeQueue::new);
      q.lock.lock();
      try {
        if (q.retired) {
          continue; // its last waiter left between computeIfAbsent and lock: take a fresh one
        }
        QueuedWaiter w = new QueuedWaiter(q);
        q.waiters.add(w);
        return w;
      } finally {
        q.lock.unlock();
      }
    }
  }

  @Override
  public boolean isReliable(String node) {
    return reliable.test(node);
  }

  /** {@inheritDoc} Here: during a turn or a lost-race pause (class description). */
  @Override
  public boolean leavingTurn(String node) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    return q != null && q.leaveUntil - clock.nanoTime() > 0;
  }

  /** {@inheritDoc} Here: a node without waiters is not tracked ({@link Attempt#UNTRACKED}). */
  @Override
  public Optional<Attempt> beginAttempt(String node) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    if (q == null) {
      return Optional.of(Attempt.UNTRACKED);
    }
    q.lock.lock();
    try {
      if (q.attempting) {
        return Optional.empty();
      }
      q.attempting = true;
      q.releasedMidAttempt = false;
    } finally {
      q.lock.unlock();
    }
    AtomicBoolean ended = new AtomicBoolean();
    long start = clock.nanoTime();
    return Optional.of(
        how -> {
          if (!ended.compareAndSet(false, true)) {
            return;
          }
          if (how == Attempt.End.WON || how == Attempt.End.HELD_ELSEWHERE) {
            long took = Math.max(0, clock.nanoTime() - start); // a compare-and-set and its answer
            roundTrip = measured ? roundTrip + (took - roundTrip) / 4 : took; // lost update: skew
            measured = true;
          }
          Wake wake = Wake.NONE;
          q.lock.lock();
          try {
            q.attempting = false;
            switch (how) {
              case WON -> q.lostLastRace = false;
              case HELD_ELSEWHERE -> q.lostLastRace = true;
              case UNDECIDED -> wake = q.handToOldest();
              case HELD_HERE -> {}
            }
            if (how != Attempt.End.WON && how != Attempt.End.UNDECIDED && q.releasedMidAttempt) {
              wake = q.handToOldest(); // the holder it met may be the one released meanwhile
            }
          } finally {
            q.lock.unlock();
          }
          wake.deliver();
        });
  }

  /**
   * The lock on {@code node} was released: hands one wake-up to its oldest waiter without one.
   *
   * @return whether a waiter was handed the wake-up
   * @throws NullPointerException if {@code node} is null
   */
  public boolean released(String node) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    if (q == null) {
      return false;
    }
    Wake wake;
    q.lock.lock();
    try {
      long now = clock.nanoTime();
      if (now - q.turnStart >= TURN.toNanos()) {
        q.leaveUntil = now + LEAVE.toNanos(); // a turn for other schedulers' pollers
        q.turnStart = q.leaveUntil;
      } else if (q.lostLastRace && q.leaving() <= 0 && !q.oldestWaitedATurn(now)) {
        long pause = 2 * roundTrip + clock.randomBelow(2 * roundTrip + 1);
        q.leaveUntil = now + Math.max(MIN_PAUSE, Math.min(pause, MAX_PAUSE.toNanos()));
      }
      q.releasedMidAttempt |= q.attempting; // its waiter may be refused the slot: see the end
      wake = q.handToOldest();
    } finally {
      q.lock.unlock();
    }
    return wake.deliver();
  }

  /**
   * The node was deleted (or its state is unknown): hands a wake-up to every waiter of it.
   *
   * @return how many waiters were handed one
   * @throws NullPointerException if {@code node} is null
   */
  public int wakeAll(String node) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    if (q == null) {
      return 0;
    }
    List<Wake> wakes = new ArrayList<>();
    q.lock.lock();
    try {
      for (QueuedWaiter w : q.waiters) {
        if (!w.wakeUp) {
          wakes.add(w.hand());
        }
      }
    } finally {
      q.lock.unlock();
    }
    wakes.forEach(Wake::deliver);
    return wakes.size();
  }

  /**
   * {@return the number of waiters of {@code node} with a wait pending (a snapshot)}
   *
   * @throws NullPointerException if {@code node} is null
   */
  public int waiting(String node) {
    return count(node, w -> w.pending != null && !w.wakeUp);
  }

  /**
   * @return the number of open waiters of {@code node} (waiting or between attempts)
   * @throws NullPointerException if {@code node} is null
   */
  public int queueLength(String node) {
    return count(node, w -> true);
  }

  /** The node's open waiters matching {@code which}, under its lock. */
  private int count(String node, Predicate<QueuedWaiter> which) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    if (q == null) {
      return 0;
    }
    q.lock.lock();
    try {
      return (int) q.waiters.stream().filter(which).count();
    } finally {
      q.lock.unlock();
    }
  }

  /** The nodes that have at least one open waiter (a snapshot, e.g. for a relist). */
  public List<String> nodesWithWaiters() {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, NodeQueue> e : nodes.entrySet()) {
      if (!e.getValue().retired) {
        out.add(e.getKey());
      }
    }
    return out;
  }

  /** The number of nodes with an entry (each has at least one open waiter). */
  int trackedNodes() {
    return nodes.size();
  }

  @Override
  public String toString() {
    return "FairReleaseQueue[nodes=" + nodes.size() + "]";
  }

  private final class NodeQueue {
    final String node;
    final ReentrantLock lock = new ReentrantLock();
    final LinkedHashSet<QueuedWaiter> waiters = new LinkedHashSet<>(); // open ones, arrival order
    volatile boolean retired; // the last waiter left, the entry was removed from the map
    long turnStart; // since when the lock passed between waiters without a turn
    volatile long leaveUntil; // until when the lock is left to others; the past if not
    boolean attempting; // a waiter's compare-and-set is in flight (beginAttempt); guarded by lock
    boolean lostLastRace; // this process's last decided attempt met another's value; guarded
    boolean releasedMidAttempt; // a release came while the attempt was in flight; guarded

    NodeQueue(String node) {
      this.node = node;
      this.turnStart = clock.nanoTime();
      this.leaveUntil = turnStart;
    }

    /** Lock held: how long the lock is still left to others, ns ({@code <= 0}: not). */
    long leaving() {
      return leaveUntil - clock.nanoTime();
    }

    /**
     * Lock held: whether the oldest waiter joined a {@link #TURN} ago (then no lost-race pause, or
     * a rival whose queue empties at every win would hold ours back past their retry timeout).
     */
    boolean oldestWaitedATurn(long now) {
      return !waiters.isEmpty() && now - waiters.iterator().next().joinedAt >= TURN.toNanos();
    }

    /** Lock held. */
    Wake handToOldest() {
      for (QueuedWaiter w : waiters) {
        if (!w.wakeUp) {
          return w.hand();
        }
      }
      return Wake.NONE;
    }
  }

  /**
   * A wake-up handed under the node's lock, delivered outside it (dependents never run under it).
   */
  private record Wake(QueuedWaiter waiter, CompletableFuture<Boolean> pending) {
    static final Wake NONE = new Wake(null, null);

    /** Whether a waiter was handed the wake-up. */
    boolean deliver() {
      if (waiter == null) {
        return false;
      }
      if (pending == null) {
        waiter.afterTurn(); // kept; a wait pending during a turn takes it when the turn ends
      } else if (!pending.complete(true)) {
        waiter.keep(); // its wait was withdrawn meanwhile: the wake-up stays the waiter's
      }
      return true;
    }
  }

  private final class QueuedWaiter implements Waiter {
    private final NodeQueue q;
    final long joinedAt = clock.nanoTime();
    boolean wakeUp; // these three guarded by q.lock
    CompletableFuture<Boolean> pending; // the wait in progress, completed outside the lock
    boolean closed;

    QueuedWaiter(NodeQueue q) {
      this.q = q;
    }

    /** Lock held: a pending wait consumes the wake-up, else (or during a turn) it is kept. */
    Wake hand() {
      CompletableFuture<Boolean> f = q.leaving() > 0 ? null : pending;
      pending = f == null ? pending : null;
      wakeUp = f == null;
      return new Wake(this, f);
    }

    /** A wake-up held while a wait is pending: handed to that wait when the turn ends. */
    void afterTurn() {
      CompletableFuture<Boolean> f = null;
      long leaving;
      q.lock.lock();
      try {
        leaving = q.leaving();
        if (pending == null || !wakeUp) {
          return;
        }
        if (leaving <= 0) {
          f = pending;
          pending = null;
          wakeUp = false;
        }
      } finally {
        q.lock.unlock();
      }
      if (f == null) {
        clock.schedule(this::afterTurn, leaving);
      } else if (!f.complete(true)) {
        keep();
      }
    }

    /** A wake-up delivered to a wait withdrawn meanwhile: kept, or passed on if closed. */
    void keep() {
      Wake next = Wake.NONE;
      q.lock.lock();
      try {
        if (!closed) {
          wakeUp = true;
        } else {
          next = q.handToOldest();
        }
      } finally {
        q.lock.unlock();
      }
      next.deliver();
    }

    @Override
    public String node() {
      return q.node;
    }

    @Override
    public CompletableFuture<Boolean> awaitAsync(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      long nanos = timeout.isNegative() ? 0 : saturatedNanos(timeout);
      CompletableFuture<Boolean> f = new CompletableFuture<>();
      long turnEnds;
      q.lock.lock();
      try {
        if (closed) {
          throw new IllegalStateException("waiter for node " + q.node + " is closed");
        }
        if (pending != null) {
          throw new IllegalStateException("waiter for node " + q.node + " has a wait pending");
        }
        boolean turn = q.leaving() > 0; // a wake-up counts after a turn left to others
        turnEnds = wakeUp && turn ? q.leaving() : Long.MAX_VALUE;
        if ((wakeUp && !turn) || nanos == 0) {
          boolean had = wakeUp && !turn;
          wakeUp &= !had;
          return CompletableFuture.completedFuture(had);
        }
        pending = f;
      } finally {
        q.lock.unlock();
      }
      if (turnEnds < nanos) {
        afterTurn(); // a wake-up held during the turn: this wait takes it when the turn ends
      }
      if (!f.isDone()) {
        Future<?> timer = clock.schedule(() -> settle(f), nanos);
        f.whenComplete((v, e) -> timer.cancel(false));
      }
      f.whenComplete((v, e) -> settle(f)); // a cancel by the caller withdraws the wait
      return f;
    }

    /** Ends wait {@code f} with {@code false} if it is still pending (timeout, withdrawal). */
    private void settle(CompletableFuture<Boolean> f) {
      q.lock.lock();
      try {
        if (pending != f) {
          return;
        }
        pending = null;
      } finally {
        q.lock.unlock();
      }
      f.complete(false);
    }

    @Override
    public boolean drain() {
      q.lock.lock();
      try {
        boolean had = wakeUp;
        wakeUp = false;
        return had;
      } finally {
        q.lock.unlock();
      }
    }

    @Override
    public void close() {
      CompletableFuture<Boolean> ended;
      Wake next = Wake.NONE;
      q.lock.lock();
      try {
        if (closed) {
          return;
        }
        closed = true;
        ended = pending; // a wait in progress ends with false
        pending = null;
        q.waiters.remove(this);
        if (wakeUp) {
          wakeUp = false;
          next = q.handToOldest(); // not ours to keep: the next waiter may take the free lock
        }
        if (q.waiters.isEmpty()) {
          q.retired = true;
          nodes.remove(q.node, q);
        }
      } finally {
        q.lock.unlock();
      }
      next.deliver();
      if (ended != null) {
        ended.complete(false);
      }
    }

    @Override
    public String toString() {
      return "Waiter[node=" + q.node + "]";
    }
  }
}
