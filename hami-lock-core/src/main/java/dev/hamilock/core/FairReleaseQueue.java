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
 * <p>Reliability ({@link #isReliable(String)}) is the feeder's to tell: a queue fed by a connected,
 * synced node watch is reliable while the watch is; one fed by a store's own writes (the in-memory
 * store) is not needed to be, as waiters poll anyway. Thread-safe.
 */
public final class FairReleaseQueue implements LockReleaseSignal {

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

    NodeQueue(String node) {
      this.node = node;
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
          while (!wakeUp && !closed && remaining > 0) {
            remaining = clock.awaitNanos(condition, remaining);
          }
        } finally {
          awaiting = false;
        }
        if (!wakeUp) {
          return false;
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
