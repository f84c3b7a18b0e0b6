package dev.hamilock.k8s.watch;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.NodeLockListener;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link LockReleaseSignal} that wakes <em>one</em> waiter per release, in arrival order per
 * node, instead of a herd (HAMi#2589: every waiter of HAMi's fixed 100 ms tick PATCHes at once).
 *
 * <p><b>How it composes with core's {@code NodeLockAcquirer}.</b> The acquirer takes
 * {@link #version(String)} before each attempt and, after contention, calls
 * {@link #awaitChange(String, long, Duration)} for at most the poll interval. Here:
 * <ul>
 *   <li>the first {@code awaitChange} of a thread for a node gives that thread a <em>ticket</em>
 *       at the tail of the node's queue; later {@code awaitChange} calls of the same thread for
 *       the same node keep the ticket, so a waiter keeps its place across attempts;</li>
 *   <li>{@link #released(String)} (called by the node watch when the lock annotation disappears)
 *       bumps the node's version and wakes only the oldest ticket that is currently waiting;
 *       other waiters sleep on until their timeout ends and then answer {@code false} (the
 *       release was not theirs); polling stays the fallback, so a waiter never depends on being
 *       woken;</li>
 *   <li>a version that changed before {@code awaitChange} is entered still returns at once (no
 *       lost wake-up), exactly as the {@link LockReleaseSignal} contract requires — except for
 *       changes that happened while the same thread was already waiting for the node in an
 *       earlier call and were given to an older waiter: the acquirer waits in slices of one poll
 *       interval with the same {@code sinceVersion}, and re-entering must not turn those releases
 *       into a herd;</li>
 *   <li>tickets end when the acquirer reports the end of the acquire call on that thread through
 *       {@link NodeLockListener#waited} — use {@link #listener(NodeLockListener)} as the
 *       acquirer's listener — or, for callers that do not, after {@code staleAfter} without any
 *       {@code awaitChange} of that thread (default 60 s, longer than the 28 s retry timeout).</li>
 * </ul>
 * <b>Reliability.</b> {@link #isReliable(String)} is {@code true} while the {@link NodeLockWatch}
 * feeding this signal has its stream open on a synced view (after a LIST, or resumed from a
 * resourceVersion the server still had, so every release is replayed to it); core's acquirer
 * then waits for the wake-up up to {@code RetryPolicy.watchedPollInterval()} (1 s) instead of
 * polling every 100 ms. The watch clears the flag whenever its stream is down. A signal fed by
 * something else (or by nothing) is never reliable. One watch per signal.
 *
 * <p>Waking only on release (not on every change of the value) is deliberate: a lock passing from
 * one holder to another (takeover, re-stamp, or a waiter acquiring it) cannot make it free, and
 * waking a waiter for it would cost a PATCH and a GET for nothing. A deleted node wakes everyone.
 *
 * <p>Versions come from one counter, so they never repeat. Memory: one small entry per node
 * seen plus one ticket per waiting thread. Thread-safe.
 */
public final class FairLockReleaseSignal implements LockReleaseSignal {

    /** Default time after which an idle ticket of a thread that never reported its end is dropped. */
    public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(60);

    private final AtomicLong versions = new AtomicLong();
    private final ConcurrentMap<String, NodeQueue> nodes = new ConcurrentHashMap<>();
    private final long staleAfterNanos;
    private volatile boolean reliable;

    /** Creates a signal with {@link #DEFAULT_STALE_AFTER}. */
    public FairLockReleaseSignal() {
        this(DEFAULT_STALE_AFTER);
    }

    /**
     * @param staleAfter how long an idle ticket survives without {@code awaitChange}; positive
     * @throws IllegalArgumentException if null or not positive
     */
    public FairLockReleaseSignal(Duration staleAfter) {
        if (staleAfter == null || staleAfter.isZero() || staleAfter.isNegative()) {
            throw new IllegalArgumentException("staleAfter must be positive: " + staleAfter);
        }
        this.staleAfterNanos = staleAfter.toNanos();
    }

    @Override
    public long version(String node) {
        NodeQueue q = queue(node);
        q.lock.lock();
        try {
            return q.version;
        } finally {
            q.lock.unlock();
        }
    }

    @Override
    public boolean awaitChange(String node, long sinceVersion, Duration timeout) throws InterruptedException {
        if (timeout == null) {
            throw new IllegalArgumentException("timeout must not be null");
        }
        NodeQueue q = queue(node);
        long remaining = timeout.isNegative() ? 0 : saturatedNanos(timeout);
        Thread me = Thread.currentThread();
        q.lock.lockInterruptibly();
        try {
            purgeStale(q, System.nanoTime());
            Ticket t = q.tickets.get(me);
            // releases that happened while this thread was waiting went to an older waiter (or
            // timed out with nobody waiting and were seen at the end of that wait): only a change
            // after both the caller's version and the end of this thread's last wait counts
            long since = t != null && t.seenVersion > sinceVersion ? t.seenVersion : sinceVersion;
            if (q.version != since) {
                return true;
            }
            if (t == null) {
                t = new Ticket(q.lock.newCondition());
                q.tickets.put(me, t);
            }
            t.waiting = true;
            t.woken = false;
            try {
                while (!t.woken && remaining > 0) {
                    remaining = t.condition.awaitNanos(remaining);
                }
                // not woken: the timeout is over (a release may have woken an older waiter
                // instead of us: that is not a change for us; we keep our place in the queue)
                return t.woken;
            } finally {
                t.waiting = false;
                t.woken = false;
                t.seenVersion = q.version;
                t.lastActive = System.nanoTime();
            }
        } finally {
            q.lock.unlock();
        }
    }

    /**
     * @param node the node name (the reliability covers every node the watch sees)
     * @return {@code true} while the feeding {@link NodeLockWatch}'s stream is open on a synced
     *         view, so no release can be missed
     */
    @Override
    public boolean isReliable(String node) {
        return reliable;
    }

    /** Set by the feeding {@link NodeLockWatch}: whether its stream is open on a synced view. */
    void reliable(boolean on) {
        reliable = on;
    }

    /** @return the nodes with at least one thread waiting in {@link #awaitChange} right now */
    java.util.List<String> nodesWithWaiters() {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (Map.Entry<String, NodeQueue> e : nodes.entrySet()) {
            NodeQueue q = e.getValue();
            q.lock.lock();
            try {
                if (q.tickets.values().stream().anyMatch(t -> t.waiting)) {
                    out.add(e.getKey());
                }
            } finally {
                q.lock.unlock();
            }
        }
        return out;
    }

    /**
     * The lock on {@code node} was released (its value disappeared): wakes the oldest waiting
     * ticket of that node, if any.
     *
     * @param node the node name
     * @return whether a waiting thread was woken ({@code false}: nobody was waiting; threads
     *         between attempts see the new version by themselves)
     * @throws IllegalArgumentException if {@code node} is null
     */
    public boolean released(String node) {
        NodeQueue q = queue(node);
        q.lock.lock();
        try {
            q.version = versions.incrementAndGet();
            for (Ticket t : q.tickets.values()) {
                if (t.waiting && !t.woken) {
                    t.woken = true;
                    t.condition.signal();
                    return true;
                }
            }
            return false;
        } finally {
            q.lock.unlock();
        }
    }

    /**
     * @param node the node name
     * @return the number of threads inside {@link #awaitChange} for the node that have not been
     *         woken yet (a snapshot; for metrics and tests)
     * @throws IllegalArgumentException if {@code node} is null
     */
    public int waiting(String node) {
        NodeQueue q = nodes.get(requireNode(node));
        if (q == null) {
            return 0;
        }
        q.lock.lock();
        try {
            return (int) q.tickets.values().stream().filter(t -> t.waiting && !t.woken).count();
        } finally {
            q.lock.unlock();
        }
    }

    /**
     * The node was deleted (or its state is unknown after a relist): wakes every waiter of it.
     *
     * @param node the node name
     * @throws IllegalArgumentException if {@code node} is null
     */
    public void wakeAll(String node) {
        NodeQueue q = queue(node);
        q.lock.lock();
        try {
            q.version = versions.incrementAndGet();
            for (Ticket t : q.tickets.values()) {
                if (t.waiting) {
                    t.woken = true;
                    t.condition.signal();
                }
            }
        } finally {
            q.lock.unlock();
        }
    }

    /**
     * Ends the calling thread's ticket for {@code node} (its acquire call is over).
     *
     * @param node the node name
     * @throws IllegalArgumentException if {@code node} is null
     */
    public void finished(String node) {
        NodeQueue q = nodes.get(requireNode(node));
        if (q == null) {
            return;
        }
        q.lock.lock();
        try {
            q.tickets.remove(Thread.currentThread());
        } finally {
            q.lock.unlock();
        }
    }

    /**
     * @param node the node name
     * @return the number of threads holding a ticket (waiting or between attempts) for the node
     */
    public int queueLength(String node) {
        NodeQueue q = nodes.get(requireNode(node));
        if (q == null) {
            return 0;
        }
        q.lock.lock();
        try {
            purgeStale(q, System.nanoTime());
            return q.tickets.size();
        } finally {
            q.lock.unlock();
        }
    }

    /**
     * A listener that ends the acting thread's ticket when an acquire call of core's
     * {@code NodeLockAcquirer} ends ({@link NodeLockListener#waited}), then forwards every event
     * to {@code delegate}.
     *
     * @param delegate the listener to forward to; not null
     * @return the wrapping listener
     * @throws IllegalArgumentException if {@code delegate} is null
     */
    public NodeLockListener listener(NodeLockListener delegate) {
        if (delegate == null) {
            throw new IllegalArgumentException("delegate must not be null");
        }
        return new TicketListener(this, delegate);
    }

    private void purgeStale(NodeQueue q, long now) {
        Iterator<Ticket> it = q.tickets.values().iterator();
        while (it.hasNext()) {
            Ticket t = it.next();
            if (!t.waiting && now - t.lastActive > staleAfterNanos) {
                it.remove();
            }
        }
    }

    private NodeQueue queue(String node) {
        return nodes.computeIfAbsent(requireNode(node), n -> new NodeQueue(versions.get()));
    }

    private static String requireNode(String node) {
        if (node == null) {
            throw new IllegalArgumentException("node must not be null");
        }
        return node;
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 2;
        }
    }

    private static final class NodeQueue {
        final ReentrantLock lock = new ReentrantLock();
        /** Arrival order of the threads waiting for this node. */
        final Map<Thread, Ticket> tickets = new LinkedHashMap<>();
        long version;

        NodeQueue(long version) {
            this.version = version;
        }
    }

    private static final class Ticket {
        final Condition condition;
        boolean waiting;
        boolean woken;
        /** The node's version when this thread's last wait ended. */
        long seenVersion = Long.MIN_VALUE;
        long lastActive = System.nanoTime();

        Ticket(Condition condition) {
            this.condition = condition;
        }
    }

    private record TicketListener(FairLockReleaseSignal signal, NodeLockListener delegate) implements NodeLockListener {
        @Override
        public void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {
            delegate.acquired(node, key, owner, outcome);
        }

        @Override
        public void contended(LockContentionException contention) {
            delegate.contended(contention);
        }

        @Override
        public void released(String node, String key, LockOwner owner) {
            delegate.released(node, key, owner);
        }

        @Override
        public void takenOver(String node, String key, LockOwner owner, String previousValue,
                AcquireOutcome reason) {
            delegate.takenOver(node, key, owner, previousValue, reason);
        }

        @Override
        public void waited(String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
            signal.finished(node);
            delegate.waited(node, owner, waited, attempts, acquired);
        }
    }
}
