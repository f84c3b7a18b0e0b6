package dev.hamilock.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * The fair per-node wake-up queue every backend feeds: a {@link LockReleaseSignal} that wakes
 * <em>one</em> waiter per release, oldest first, instead of a herd (HAMi#2589: every waiter of
 * HAMi's fixed 100 ms tick PATCHes at once). The in-memory store calls {@link #released(String)}
 * after each delete; the Kubernetes node watch calls it when a lock annotation disappears and
 * {@link #wakeAll(String)} when a node is deleted.
 *
 * <ul>
 *   <li>{@link #join(String)} puts a {@link Waiter} at the tail of the node's queue; it keeps its
 *       place across attempts until {@link Waiter#close()};
 *   <li>{@link #released(String)} hands one wake-up to the oldest waiter of the node that does not
 *       hold one yet — whether it is waiting right now or busy with an attempt (it then finds the
 *       wake-up when it waits: no lost wake-up); a release with no such waiter is dropped (every
 *       waiter already holds one, or nobody waits);
 *   <li>a waiter closed with an unconsumed wake-up passes it to the next waiter; a closed waiter is
 *       never handed one, and a node's entry goes with its last waiter (memory: one entry per node
 *       with waiters plus one per waiter).
 * </ul>
 *
 * <p>Waking only on release (not on every change of the value) is deliberate: a lock passing from
 * one holder to another (takeover, re-stamp, a waiter acquiring it) cannot make it free, and waking
 * a waiter for it would cost a PATCH and a GET for nothing.
 *
 * <p><b>A turn for other schedulers</b> (issue 25 item 4). Woken by the watch, this process's next
 * waiter takes a released lock within one round trip, while HAMi's own scheduler polls every 100 ms
 * ({@code pkg/scheduler/scheduler.go}) and sees it free only if it polls in between: under a
 * sustained queue of this process's waiters it would starve until its retry timeout (28 s). So once
 * a node has had waiters in this queue for {@link #TURN} (5 s) without a break, the next release
 * leaves the lock free for {@link #LEAVE} (200 ms, two of HAMi's polls): the wake-up it hands takes
 * effect only then ({@link Waiter#await} does not return it earlier), and {@link
 * #leavingTurn(String)} makes every attempt of this process on the node meanwhile a contention
 * without a request; a HAMi poller (or another scheduler) that polls in the window takes the lock,
 * and this process's waiter, refused, waits for its release. The next break comes {@link #TURN}
 * later. Cost: at most 200 ms of every 5.2 s of one node's continuous queue; a queue shorter than 5
 * s never leaves a turn. Scope: one process's queue; replicas of this library each keep their own.
 *
 * <p>Reliability ({@link #isReliable(String)}) is the feeder's to tell: a queue fed by a connected,
 * synced node watch is reliable while the watch is; one fed by a store's own writes (the in-memory
 * store) is not needed to be, as waiters poll anyway. Thread-safe.
 */
public final class FairReleaseQueue implements LockReleaseSignal {

  /** How long a node's lock passes between this queue's waiters before it leaves a turn: 5 s. */
  public static final Duration TURN = Duration.ofSeconds(5);

  /** How long the lock is left to other schedulers at each turn: 200 ms, two of HAMi's polls. */
  public static final Duration LEAVE = Duration.ofMillis(200);

  private final ConcurrentMap<String, NodeQueue> nodes = new ConcurrentHashMap<>();
  private final Predicate<String> reliable;
  private final WaitClock clock;

  private FairReleaseQueue(Predicate<String> reliable, WaitClock clock) {
    this.reliable = reliable;
    this.clock = clock;
  }

  /**
   * @return a queue that never calls itself reliable, on the system clock
   */
  public static FairReleaseQueue create() {
    return create(node -> false);
  }

  /**
   * @param reliable answers {@link #isReliable(String)} (cheap, no I/O), e.g. whether the feeding
   *     watch is connected and synced
   * @return a queue on the system clock
   * @throws NullPointerException if {@code reliable} is null
   */
  public static FairReleaseQueue create(Predicate<String> reliable) {
    return create(reliable, WaitClock.SYSTEM);
  }

  /**
   * @param reliable answers {@link #isReliable(String)}
   * @param clock the clock waits run on ({@link WaitClock#awaitNanos})
   * @return a queue
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

  /**
   * {@inheritDoc}
   *
   * <p>Here: within {@link #LEAVE} after a release that ended {@link #TURN} of continuous queue on
   * the node (see the class description).
   */
  @Override
  public boolean leavingTurn(String node) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    return q != null && q.leaveUntil - clock.nanoTime() > 0;
  }

  /**
   * The lock on {@code node} was released: hands one wake-up to the oldest waiter of the node that
   * does not hold one.
   *
   * @param node the node name
   * @return whether a waiter was handed the wake-up ({@code false}: no waiter, or all hold one)
   * @throws NullPointerException if {@code node} is null
   */
  public boolean released(String node) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    if (q == null) {
      return false;
    }
    q.lock.lock();
    try {
      long now = clock.nanoTime();
      if (now - q.turnStart >= TURN.toNanos()) {
        q.leaveUntil = now + LEAVE.toNanos(); // a turn for other schedulers' pollers
        q.turnStart = q.leaveUntil;
      }
      return q.handToOldest();
    } finally {
      q.lock.unlock();
    }
  }

  /**
   * The node was deleted (or its state is unknown): hands a wake-up to every waiter of it.
   *
   * @param node the node name
   * @return how many waiters were handed one
   * @throws NullPointerException if {@code node} is null
   */
  public int wakeAll(String node) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    if (q == null) {
      return 0;
    }
    q.lock.lock();
    try {
      int n = 0;
      for (QueuedWaiter w : q.waiters) {
        if (!w.wakeUp) {
          w.hand();
          n++;
        }
      }
      return n;
    } finally {
      q.lock.unlock();
    }
  }

  /**
   * @param node the node name
   * @return the number of waiters inside {@link Waiter#await} for the node without a wake-up (a
   *     snapshot; for metrics and tests)
   * @throws NullPointerException if {@code node} is null
   */
  public int waiting(String node) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    if (q == null) {
      return 0;
    }
    q.lock.lock();
    try {
      return (int) q.waiters.stream().filter(w -> w.awaiting && !w.wakeUp).count();
    } finally {
      q.lock.unlock();
    }
  }

  /**
   * @param node the node name
   * @return the number of open waiters for the node (waiting or between attempts)
   * @throws NullPointerException if {@code node} is null
   */
  public int queueLength(String node) {
    NodeQueue q = nodes.get(Objects.requireNonNull(node, "node"));
    if (q == null) {
      return 0;
    }
    q.lock.lock();
    try {
      return q.waiters.size();
    } finally {
      q.lock.unlock();
    }
  }

  /**
   * @return the nodes that have at least one open waiter (a snapshot, e.g. for a relist)
   */
  public List<String> nodesWithWaiters() {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, NodeQueue> e : nodes.entrySet()) {
      if (!e.getValue().retired) {
        out.add(e.getKey());
      }
    }
    return out;
  }

  /**
   * @return the number of nodes with an entry (each has at least one open waiter)
   */
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

    /** Arrival order; only open waiters. */
    final LinkedHashSet<QueuedWaiter> waiters = new LinkedHashSet<>();

    /** Set (under the lock) when the last waiter left and the entry was removed from the map. */
    volatile boolean retired;

    /** {@link WaitClock#nanoTime()} since when the lock passed between waiters without a turn. */
    long turnStart;

    /** Until when ({@link WaitClock#nanoTime()}) the lock is left to others; the past if not. */
    volatile long leaveUntil;

    NodeQueue(String node) {
      this.node = node;
      this.turnStart = clock.nanoTime();
      this.leaveUntil = turnStart;
    }

    /** Lock held. */
    boolean handToOldest() {
      for (QueuedWaiter w : waiters) {
        if (!w.wakeUp) {
          w.hand();
          return true;
        }
      }
      return false;
    }
  }

  private final class QueuedWaiter implements Waiter {
    private final NodeQueue q;
    private final Condition condition;

    /** All fields guarded by {@code q.lock}. */
    boolean wakeUp;

    boolean awaiting;
    boolean closed;

    QueuedWaiter(NodeQueue q) {
      this.q = q;
      this.condition = q.lock.newCondition();
    }

    /** Lock held. */
    void hand() {
      wakeUp = true;
      condition.signal();
    }

    @Override
    public String node() {
      return q.node;
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
      Objects.requireNonNull(timeout, "timeout");
      long remaining = timeout.isNegative() ? 0 : saturatedNanos(timeout);
      q.lock.lockInterruptibly();
      try {
        if (closed) {
          throw new IllegalStateException("waiter for node " + q.node + " is closed");
        }
        awaiting = true;
        try {
          while (!closed && remaining > 0) {
            long leaving = q.leaveUntil - clock.nanoTime(); // a wake-up counts after the turn
            if (wakeUp && leaving <= 0) {
              break;
            }
            long slice = wakeUp ? Math.min(remaining, leaving) : remaining;
            remaining -= slice - clock.awaitNanos(condition, slice);
          }
        } finally {
          awaiting = false;
        }
        if (!wakeUp || q.leaveUntil - clock.nanoTime() > 0) {
          return false; // a wake-up held during a turn left to others stays held
        }
        wakeUp = false;
        return true;
      } finally {
        q.lock.unlock();
      }
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
      q.lock.lock();
      try {
        if (closed) {
          return;
        }
        closed = true;
        condition.signal(); // a thread inside await (close may come from another) returns false
        q.waiters.remove(this);
        if (wakeUp) {
          wakeUp = false;
          q.handToOldest(); // not ours to keep: the next waiter may take the free lock
        }
        if (q.waiters.isEmpty()) {
          q.retired = true;
          nodes.remove(q.node, q);
        }
      } finally {
        q.lock.unlock();
      }
    }

    @Override
    public String toString() {
      return "Waiter[node=" + q.node + "]";
    }
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE / 2;
    }
  }
}
