package dev.hamilock.core;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A thread-safe {@link LockReleaseSignal} that backends drive: call {@link #lockChanged(String)}
 * whenever a node's lock value changes or disappears (the in-memory store does it after each
 * write; the Kubernetes backend from its node watch).
 *
 * <p>Versions come from one process-wide counter, so a node's version never repeats even after
 * {@link #forget(String)}. Memory: one small entry per node ever signalled or awaited; call
 * {@link #forget(String)} when a node is deleted (HAMi's {@code CleanupNodeLock} equivalent).
 */
public final class LockChangeNotifier implements LockReleaseSignal {

    private final AtomicLong versions = new AtomicLong();
    private final ConcurrentMap<String, NodeState> nodes = new ConcurrentHashMap<>();

    /** Creates a notifier with no nodes. */
    public LockChangeNotifier() {
    }

    /**
     * Records that the lock on {@code node} changed and wakes every waiter for that node.
     *
     * @param node the node name
     * @throws IllegalArgumentException if {@code node} is null
     */
    public void lockChanged(String node) {
        NodeState state = state(node);
        synchronized (state) {
            state.version = versions.incrementAndGet();
            state.notifyAll();
        }
    }

    /**
     * Drops the entry of a deleted node, waking its waiters.
     *
     * @param node the node name
     */
    public void forget(String node) {
        NodeState state = nodes.remove(node);
        if (state != null) {
            synchronized (state) {
                state.version = versions.incrementAndGet();
                state.notifyAll();
            }
        }
    }

    @Override
    public long version(String node) {
        NodeState state = state(node);
        synchronized (state) {
            return state.version;
        }
    }

    @Override
    public boolean awaitChange(String node, long sinceVersion, Duration timeout) throws InterruptedException {
        if (timeout == null) {
            throw new IllegalArgumentException("timeout must not be null");
        }
        NodeState state = state(node);
        long deadline = System.nanoTime() + Math.max(0, saturatedNanos(timeout));
        synchronized (state) {
            while (state.version == sinceVersion) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
                state.wait(remaining / 1_000_000L, (int) (remaining % 1_000_000L));
            }
            return true;
        }
    }

    private NodeState state(String node) {
        if (node == null) {
            throw new IllegalArgumentException("node must not be null");
        }
        return nodes.computeIfAbsent(node, n -> new NodeState(versions.get()));
    }

    private static long saturatedNanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE / 2;
        }
    }

    private static final class NodeState {
        long version;

        NodeState(long version) {
            this.version = version;
        }
    }
}
