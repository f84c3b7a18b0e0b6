package dev.hamilock.core.acquire;

import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeException;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockException;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gang-aware acquire loop: takes every lock key a pod needs on a node, all or nothing,
 * waiting for contended locks only when the pod is a gang member. Follows HAMi's
 * {@code acquireNodeLocks} and {@code lockAllDevices} ({@code pkg/scheduler/scheduler.go}).
 *
 * <p><b>One attempt</b>: the locks are taken in byte order of their keys (HAMi sorts vendor
 * keys the same way; locks with equal keys are taken once — the first instance given wins, as
 * HAMi's vendors sharing {@code hami.io/mutex.lock} hit the re-entrant branch). On the first
 * failure, the locks taken so far in this attempt are released in reverse order (release
 * errors are logged at WARN and attached as suppressed exceptions) and the original exception
 * is returned — the same instance. A lock the pod already held before the call is released by
 * the rollback too, as in HAMi. So is the failing lock itself when its write may have been
 * applied ({@link LockBackendException.Kind#UNAVAILABLE}: outcome unknown;
 * {@link LockBackendException.Kind#INTERRUPTED}); releases are owner-checked, so this never
 * removes anyone else's lock. Rollbacks run with the thread's interrupt flag cleared and then
 * restored, so an interrupt or cancel does not leave the locks held.
 *
 * <p><b>Waiting</b>: only {@link LockContentionException} is retried, and only for gang members
 * ({@link dev.hamilock.core.GangMembership}) with a positive retry timeout; everyone else gets
 * exactly one attempt. Retries use a Failsafe {@code RetryPolicy} with unlimited retries
 * ({@code withMaxRetries(-1)}: Failsafe's default of 2 would silently cap the duration,
 * failsafe#241) bounded by {@code withMaxDuration(retryTimeout)}. Between attempts nothing is
 * held; the loop waits a jittered exponential back-off — the {@code k}-th wait of a call a random
 * time in {@code (0, min(maxPollInterval, pollInterval·2^k)]}: 100, 200, 400, 800 ms, then 1 s
 * bounds by default (HAMi#2589: a queue of waiters without the watch no longer polls every 100 ms
 * each) — never past the deadline, and wakes as soon as the contended lock's
 * {@link LockReleaseSignal} reports a change. While that signal
 * reports itself reliable ({@link LockReleaseSignal#isReliable(String)}, e.g. a connected, synced
 * node watch), the wait is extended up to {@link RetryPolicy#watchedPollInterval()} (1 s): the
 * waiter sleeps in slices of at most one poll interval and re-asks the signal after each, so a
 * signal that stops being reliable returns it to the 100 ms poll within one poll interval. When the timeout runs
 * out the result is a {@link LockWaitTimeoutException}: {@code timed out after 28s waiting for
 * node <node> to be unlocked: node lock contention}.
 *
 * <p><b>Cancellation</b>: interrupting the calling thread ends {@link #acquire} with
 * {@link InterruptedException} (nothing held); {@link CompletableFuture#cancel(boolean)} on the
 * future of {@link #acquireAsync} interrupts the worker, and locks obtained by a cancelled
 * acquisition are released.
 *
 * <p>Thread-safe and reusable; one instance per retry policy.
 */
public final class NodeLockAcquirer {

    private static final Logger LOG = LoggerFactory.getLogger(NodeLockAcquirer.class);

    private static final Comparator<String> BYTE_ORDER = (a, b) -> Arrays.compareUnsigned(
            a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));

    private final RetryPolicy policy;
    private final NodeLockListener listener;
    private final WaitClock time;

    private NodeLockAcquirer(RetryPolicy policy, NodeLockListener listener, WaitClock time) {
        this.policy = policy;
        this.listener = NodeLockListener.guarded(listener);
        this.time = time;
    }

    /**
     * @param policy the retry policy
     * @return an acquirer without listener
     * @throws IllegalArgumentException if {@code policy} is null
     */
    public static NodeLockAcquirer create(RetryPolicy policy) {
        return create(policy, NodeLockListener.NOOP);
    }

    /**
     * @param policy   the retry policy
     * @param listener receives {@link NodeLockListener#waited} once per acquire call
     * @return an acquirer
     * @throws IllegalArgumentException if an argument is null
     */
    public static NodeLockAcquirer create(RetryPolicy policy, NodeLockListener listener) {
        if (policy == null) {
            throw new IllegalArgumentException("policy must not be null");
        }
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        return new NodeLockAcquirer(policy, listener, WaitClock.SYSTEM);
    }

    /** Test seam: an acquirer on the given time, sleeper and jitter source. */
    static NodeLockAcquirer create(RetryPolicy policy, NodeLockListener listener, WaitClock time) {
        if (time == null) {
            throw new IllegalArgumentException("time must not be null");
        }
        create(policy, listener); // validates
        return new NodeLockAcquirer(policy, listener, time);
    }

    /** @return the retry policy */
    public RetryPolicy policy() {
        return policy;
    }

    /**
     * Acquires every lock in {@code locks} on {@code node} for {@code owner}, waiting for
     * contended locks if {@code gangMember} and the policy allows retries.
     *
     * @param node       the node name; non-blank
     * @param owner      the pod
     * @param gangMember whether the pod is a gang member ({@link dev.hamilock.core.GangMembership#isMember})
     * @param locks      the locks the pod needs (one per vendor key); non-empty, no null elements
     * @return the keys held, wait time and attempts
     * @throws LockWaitTimeoutException if a gang member's retry timeout ran out
     * @throws LockContentionException  if a non-member (or fail-fast policy) met contention
     * @throws NodeLockException        any other error of a lock, returned at once (same instance)
     * @throws InterruptedException     if the thread was interrupted while waiting
     * @throws IllegalArgumentException naming the argument for null/blank node, null owner, or
     *                                  null/empty locks
     */
    public LockAcquisition acquire(String node, LockOwner owner, boolean gangMember,
            Collection<? extends NodeLock> locks) throws NodeLockException, InterruptedException {
        List<NodeLock> ordered = validate(node, owner, locks);
        long start = time.nanoTime();
        Attempts state = new Attempts(time);
        boolean acquired = false;
        try {
            List<String> keys;
            if (!gangMember || !policy.retriesEnabled()) {
                state.count = 1;
                keys = attemptAll(node, owner, ordered, state);
            } else {
                keys = acquireWithRetries(node, owner, ordered, state, start);
            }
            acquired = true;
            return new LockAcquisition(node, owner, keys, Duration.ofNanos(time.nanoTime() - start), state.count);
        } finally {
            listener.waited(node, owner, Duration.ofNanos(time.nanoTime() - start), Math.max(1, state.count),
                    acquired);
        }
    }

    /**
     * Runs {@link #acquire} on {@code executor}. Cancelling the returned future interrupts the
     * worker; if the locks were obtained anyway they are released.
     *
     * @param node       the node name; non-blank
     * @param owner      the pod
     * @param gangMember whether the pod is a gang member
     * @param locks      the locks the pod needs; non-empty
     * @param executor   runs the blocking loop (one thread for up to the retry timeout)
     * @return a future completed with the acquisition, or exceptionally with the exceptions
     *         {@link #acquire} throws ({@link InterruptedException} if interrupted otherwise than
     *         by cancel); a rejected task completes it with {@link RejectedExecutionException}
     * @throws IllegalArgumentException as {@link #acquire}, or if {@code executor} is null
     */
    public CompletableFuture<LockAcquisition> acquireAsync(String node, LockOwner owner, boolean gangMember,
            Collection<? extends NodeLock> locks, Executor executor) {
        List<NodeLock> ordered = validate(node, owner, locks);
        if (executor == null) {
            throw new IllegalArgumentException("executor must not be null");
        }
        CancellableFuture future = new CancellableFuture();
        try {
            executor.execute(() -> future.run(() -> acquire(node, owner, gangMember, ordered),
                    acquisition -> releaseQuietly(node, owner, ordered)));
        } catch (RejectedExecutionException e) {
            future.completeExceptionally(e);
        }
        return future;
    }

    /**
     * Releases every lock in {@code locks} held by {@code owner} on {@code node}, in reverse
     * byte order of the keys (HAMi {@code releaseAllDevices}); every lock is tried even if one
     * fails.
     *
     * @param node  the node name; non-blank
     * @param owner the pod
     * @param locks the locks; non-empty
     * @throws LockBackendException the first release failure, later ones attached as suppressed
     * @throws IllegalArgumentException as {@link #acquire}
     */
    public void releaseAll(String node, LockOwner owner, Collection<? extends NodeLock> locks)
            throws LockBackendException {
        List<NodeLock> ordered = validate(node, owner, locks);
        LockBackendException first = null;
        for (int i = ordered.size() - 1; i >= 0; i--) {
            try {
                ordered.get(i).release(node, owner);
            } catch (LockBackendException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    // ---------------------------------------------------------------------------------------

    private List<String> acquireWithRetries(String node, LockOwner owner, List<NodeLock> ordered, Attempts state,
            long start) throws NodeLockException, InterruptedException {
        Duration timeout = policy.retryTimeout();
        dev.failsafe.RetryPolicy<List<String>> retry = dev.failsafe.RetryPolicy.<List<String>>builder()
                .handle(LockContentionException.class)
                .abortOn(RetryDeadlinePassed.class)
                .withMaxRetries(-1)
                .withMaxDuration(timeout)
                .build();
        try {
            long deadline = start + timeout.toNanos();
            return Failsafe.with(retry).get(ctx -> {
                if (ctx.isRetry()) {
                    state.awaitRetry(node, policy, deadline);
                }
                state.count++;
                return attemptAll(node, owner, ordered, state);
            });
        } catch (RetryDeadlinePassed e) {
            Duration waited = Duration.ofNanos(time.nanoTime() - start);
            LOG.debug("node {}: {} gave up after {} attempts in {}: {}", node, owner, state.count, waited,
                    state.lastContention.getMessage());
            throw new LockWaitTimeoutException(node, timeout, state.count, waited, state.lastContention);
        } catch (FailsafeException e) {
            Throwable cause = e.getCause();
            if (cause instanceof LockContentionException contention) {
                Duration waited = Duration.ofNanos(time.nanoTime() - start);
                LOG.debug("node {}: {} gave up after {} attempts in {}: {}", node, owner, state.count, waited,
                        contention.getMessage());
                throw new LockWaitTimeoutException(node, timeout, state.count, waited, contention);
            }
            if (cause instanceof NodeLockException other) {
                throw other;
            }
            if (cause instanceof InterruptedException interrupted) {
                throw interrupted;
            }
            throw e;
        }
    }

    /** One all-or-nothing attempt over the ordered locks. */
    private List<String> attemptAll(String node, LockOwner owner, List<NodeLock> ordered, Attempts state)
            throws NodeLockException {
        state.snapshotSignals(node, ordered);
        List<NodeLock> held = new ArrayList<>(ordered.size());
        for (NodeLock lock : ordered) {
            try {
                lock.acquire(node, owner);
                held.add(lock);
            } catch (NodeLockException | RuntimeException e) {
                if (mayHaveWritten(e)) {
                    held.add(lock); // its write may have been applied: release it too (owner-checked)
                }
                rollback(node, owner, held, e);
                if (e instanceof LockContentionException contention) {
                    state.lastContention = contention;
                    state.contendedOn(node, lock, !held.isEmpty());
                }
                throw e;
            }
        }
        List<String> keys = new ArrayList<>(held.size());
        for (NodeLock lock : held) {
            keys.add(lock.key());
        }
        return keys;
    }

    /**
     * Whether a failed {@code acquire} may still have stored the owner's value: the backend could
     * not tell ({@link LockBackendException.Kind#UNAVAILABLE}, e.g. a timed-out write whose re-read
     * failed too), or the thread was interrupted while the request may have been on the wire.
     */
    private static boolean mayHaveWritten(Exception e) {
        return e instanceof LockBackendException b && (b.kind() == LockBackendException.Kind.UNAVAILABLE
                || b.kind() == LockBackendException.Kind.INTERRUPTED);
    }

    /**
     * Releases {@code held} in reverse order. Runs with the interrupt flag cleared (and restores
     * it): an interrupt or cancel is exactly when the locks must go, and backends refuse requests
     * of an interrupted thread.
     */
    private static void rollback(String node, LockOwner owner, List<NodeLock> held, Exception original) {
        boolean interrupted = Thread.interrupted();
        try {
            for (int i = held.size() - 1; i >= 0; i--) {
                NodeLock lock = held.get(i);
                try {
                    lock.release(node, owner);
                } catch (LockBackendException | RuntimeException e) {
                    LOG.warn("node {}: rollback release of lock {} for {} failed (original error: {}): {}", node,
                            lock.key(), owner, original.getMessage(), e.getMessage());
                    original.addSuppressed(e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Releases the locks of a cancelled acquisition, with the cancel's interrupt flag cleared meanwhile. */
    private void releaseQuietly(String node, LockOwner owner, List<NodeLock> ordered) {
        boolean interrupted = Thread.interrupted();
        try {
            releaseAll(node, owner, ordered);
        } catch (LockBackendException e) {
            LOG.warn("node {}: releasing locks of cancelled acquisition for {} failed: {}", node, owner,
                    e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static List<NodeLock> validate(String node, LockOwner owner, Collection<? extends NodeLock> locks) {
        if (node == null) {
            throw new IllegalArgumentException("node must not be null");
        }
        if (node.isBlank()) {
            throw new IllegalArgumentException("node must not be blank: \"" + node + "\"");
        }
        if (owner == null) {
            throw new IllegalArgumentException("owner must not be null");
        }
        if (locks == null || locks.isEmpty()) {
            throw new IllegalArgumentException("locks must not be null or empty");
        }
        Map<String, NodeLock> byKey = new LinkedHashMap<>();
        for (NodeLock lock : locks) {
            if (lock == null) {
                throw new IllegalArgumentException("locks must not contain null");
            }
            byKey.putIfAbsent(lock.key(), lock);
        }
        List<NodeLock> ordered = new ArrayList<>(byKey.values());
        ordered.sort(Comparator.comparing(NodeLock::key, BYTE_ORDER));
        return ordered;
    }

    /**
     * Thrown by a wait that finds the retry deadline already passed (on the acquirer's clock):
     * aborts the Failsafe loop, which then ends in {@link LockWaitTimeoutException}. Failsafe's own
     * {@code withMaxDuration} bounds the loop on the wall clock as well.
     */
    private static final class RetryDeadlinePassed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RetryDeadlinePassed() {
            super("retry deadline passed", null, false, false);
        }
    }

    /** Per-call state: attempt count and what to wait for before the next attempt. */
    private static final class Attempts {
        private final WaitClock time;
        int count;
        /** Waits so far in this call without a reliable signal: the back-off step. */
        int backoffStep;
        LockContentionException lastContention;
        private final Map<LockReleaseSignal, Long> versions = new LinkedHashMap<>();
        private LockReleaseSignal waitOn;
        private long waitSince;

        Attempts(WaitClock time) {
            this.time = time;
        }

        /** Remembers each signal's version before the attempt, so no release is missed. */
        void snapshotSignals(String node, List<NodeLock> ordered) {
            versions.clear();
            waitOn = null;
            for (NodeLock lock : ordered) {
                Optional<LockReleaseSignal> signal = lock.releaseSignal();
                if (signal.isPresent() && !versions.containsKey(signal.get())) {
                    versions.put(signal.get(), signal.get().version(node));
                }
            }
        }

        /**
         * Chooses the signal of the contended lock. If the rollback released locks (which fires
         * the signal itself), the version is re-read after the rollback so our own release does
         * not cause an immediate, useless retry; a holder's release racing with our rollback is
         * then caught by the poll instead.
         */
        void contendedOn(String node, NodeLock lock, boolean rolledBack) {
            Optional<LockReleaseSignal> signal = lock.releaseSignal();
            if (signal.isEmpty()) {
                return;
            }
            waitOn = signal.get();
            Long before = versions.get(waitOn);
            waitSince = rolledBack || before == null ? waitOn.version(node) : before;
        }

        /**
         * Waits before the next attempt. While the contended lock's signal is reliable: up to the
         * watched poll interval, in slices of at most one poll interval (unchanged by the
         * back-off). Otherwise: a jittered exponential back-off (HAMi#2589) — a uniformly random
         * time in {@code (0, min(maxPollInterval, pollInterval·2^k)]} for the {@code k}-th such
         * wait of this call. Both end early on a signalled change and never past {@code deadline}
         * ({@link WaitClock#nanoTime()} scale).
         *
         * <p>Why not Failsafe's {@code withBackoff}/{@code withJitter}: Failsafe sleeps between
         * attempts itself and cannot be woken by the release signal, and its jitter is
         * {@code ±factor·delay}, not full jitter. The retry loop stays Failsafe's; the wait is here.
         *
         * @throws RetryDeadlinePassed if the deadline has already passed
         */
        void awaitRetry(String node, RetryPolicy policy, long deadline) throws InterruptedException {
            long poll = policy.pollInterval().toNanos();
            long watched = policy.watchedPollInterval().toNanos();
            long begin = time.nanoTime();
            if (deadline - begin <= 0) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                throw new RetryDeadlinePassed();
            }
            long bound = policy.backoffBound(backoffStep).toNanos();
            // maxPollInterval == pollInterval: HAMi's fixed poll, no jitter
            long backoff = policy.maxPollInterval().equals(policy.pollInterval()) ? bound
                    : 1 + time.randomBelow(bound);
            boolean backedOff = false;
            while (true) {
                boolean reliable = waitOn != null && waitOn.isReliable(node);
                if (!reliable && !backedOff) {
                    backedOff = true;
                    backoffStep = Math.min(backoffStep + 1, 62);
                }
                long now = time.nanoTime();
                long remaining = deadline - now;
                long elapsed = now - begin;
                long budget = (reliable ? watched : backoff) - elapsed;
                long slice = Math.min(Math.min(budget, reliable ? poll : budget), remaining);
                if (slice <= 0) {
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                    return;
                }
                if (waitOn == null) {
                    time.sleepNanos(slice);
                    return;
                }
                if (waitOn.awaitChange(node, waitSince, Duration.ofNanos(Math.min(slice, poll)))) {
                    return;
                }
            }
        }
    }

    /**
     * A future whose cancel interrupts the worker while it runs the acquisition — and only then:
     * once the acquisition has returned, a cancel no longer interrupts, so undoing an acquisition
     * that won the race against the cancel is never itself interrupted.
     */
    private static final class CancellableFuture extends CompletableFuture<LockAcquisition> {
        private Thread worker;

        interface Body {
            LockAcquisition run() throws Exception;
        }

        interface Undo {
            void undo(LockAcquisition acquisition);
        }

        void run(Body body, Undo undo) {
            synchronized (this) {
                if (isDone()) {
                    return;
                }
                worker = Thread.currentThread();
            }
            LockAcquisition acquisition = null;
            Throwable failure = null;
            try {
                acquisition = body.run();
            } catch (Throwable t) {
                failure = t;
            }
            synchronized (this) {
                worker = null; // from here on, cancel() does not interrupt this thread
            }
            if (isCancelled()) {
                Thread.interrupted(); // our cancel-interrupt: neither for the undo nor for the pool thread
            }
            if (failure != null) {
                completeExceptionally(failure);
            } else if (!complete(acquisition)) {
                undo.undo(acquisition); // cancelled after the locks were obtained
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled) {
                synchronized (this) {
                    if (worker != null) {
                        worker.interrupt();
                    }
                }
            }
            return cancelled;
        }
    }
}
