package dev.hamilock.core.acquire;

import static dev.hamilock.core.BackendFailure.Kind.INTERRUPTED;
import static dev.hamilock.core.BackendFailure.Kind.UNAVAILABLE;
import static dev.hamilock.core.internal.Checks.checkArgument;
import static dev.hamilock.core.internal.Checks.requireNonBlank;
import static dev.hamilock.core.internal.Checks.saturatedNanos;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockException;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.Waiter;
import dev.hamilock.core.internal.CheckedExecutor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gang-aware acquire loop: every lock key a pod needs on a node, all or nothing (HAMi {@code
 * acquireNodeLocks}, {@code lockAllDevices} in {@code pkg/scheduler/scheduler.go}).
 *
 * <p><b>One attempt</b> takes the locks in byte order of their keys (as HAMi sorts vendor keys); on
 * the first failure the locks taken so far (and the failing one if its write may have been applied)
 * are released in reverse order, owner-checked, release errors logged at WARN and attached as
 * suppressed to the original exception.
 *
 * <p><b>Waiting</b>: only {@link LockContentionException} of gang members with a positive retry
 * timeout is retried. A member joins every lock's wake-up queue ({@link LockReleaseSignal#join})
 * for the whole call and holds no thread between attempts: the {@code k}-th wait is a random time
 * in {@code (0, RetryPolicy.backoffBound(k)]}, ended early by a release handed to it, or up to
 * {@link RetryPolicy#watchedPollInterval()} while the signal is reliable. At the deadline ({@link
 * WaitClock}, not Failsafe: its delays cannot be cut short by a release) a last attempt, then
 * {@link LockWaitTimeoutException}.
 *
 * <p><b>Cancellation</b>: interrupting {@link #acquire} throws {@link InterruptedException}
 * (nothing held); cancelling {@link #acquireAsync}'s future interrupts the attempt or ends the
 * wait, and locks won in a race with the cancel are released; a wake-up handed to the call that its
 * attempt did not use goes to the node's next waiter. Thread-safe and reusable.
 */
public final class NodeLockAcquirer {

  private static final Logger LOG = LoggerFactory.getLogger(NodeLockAcquirer.class);

  private static final Comparator<String> BYTE_ORDER =
      (a, b) ->
          Arrays.compareUnsigned(
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
   * @return an acquirer without listener, on {@link WaitClock#SYSTEM}
   * @throws NullPointerException if {@code policy} is null
   */
  public static NodeLockAcquirer create(RetryPolicy policy) {
    Objects.requireNonNull(policy, "policy");
    return new NodeLockAcquirer(policy, NodeLockListener.NOOP, WaitClock.SYSTEM);
  }

  /**
   * The acquirer of {@code settings}' retry policy, listener and wait clock (the same clock as the
   * {@link dev.hamilock.core.FairReleaseQueue} the locks signal through).
   *
   * @throws NullPointerException if {@code settings} is null
   */
  public static NodeLockAcquirer create(LockSettings settings) {
    Objects.requireNonNull(settings, "settings");
    return new NodeLockAcquirer(settings.retryPolicy(), settings.listener(), settings.waitClock());
  }

  /**
   * Acquires every lock in {@code locks} on {@code node} for {@code owner}, waiting for contended
   * locks if {@code gangMember} and the policy allows retries.
   *
   * @param gangMember whether the pod is a gang member ({@link
   *     dev.hamilock.core.GangMembership#isMember})
   * @param locks the locks the pod needs (one per vendor key); non-empty, no null elements
   * @return the keys held, wait time and attempts
   * @throws LockWaitTimeoutException if a gang member's retry timeout ran out
   * @throws LockContentionException if a non-member (or fail-fast policy) met contention
   * @throws NodeLockException any other error of a lock, returned at once (same instance; a lock's
   *     unchecked exception as {@link LockBackendException.Kind#UNAVAILABLE})
   * @throws InterruptedException if the thread was interrupted while waiting
   * @throws NullPointerException naming the argument for a null node, owner, locks or lock
   * @throws IllegalArgumentException for a blank node or empty locks, naming the value
   */
  public LockAcquisition acquire(
      String node, LockOwner owner, boolean gangMember, Collection<? extends NodeLock> locks)
      throws NodeLockException, InterruptedException {
    LinkedBlockingQueue<Runnable> attempts = new LinkedBlockingQueue<>();
    CompletableFuture<LockAcquisition> f =
        acquireAsync(node, owner, gangMember, locks, attempts::add);
    f.whenComplete((a, e) -> attempts.add(() -> {}));
    try {
      while (!f.isDone()) {
        attempts.take().run();
      }
    } catch (InterruptedException e) {
      f.cancel(true);
      throw e;
    }
    try {
      return f.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof NodeLockException n) {
        throw n;
      } else if (e.getCause() instanceof RuntimeException r) {
        throw r;
      } else if (e.getCause() instanceof Error r) {
        throw r;
      }
      throw e;
    }
  }

  /**
   * {@link #acquire} holding no thread while it waits; the arguments are {@link #acquire}'s.
   *
   * @param executor runs the attempts (a few lock requests each, never a wait); bounded, e.g. a
   *     fixed pool; not a direct executor (it would run them on the timer's or the feeder's thread)
   * @return a future completed, on the thread of the last attempt, with the acquisition, or
   *     exceptionally with the exceptions {@link #acquire} throws; a rejected attempt completes it
   *     with {@link RejectedExecutionException} (nothing held), as does any other unchecked
   *     exception of {@code executor.execute} (its cause), on whatever thread the attempt was due
   * @throws NullPointerException as {@link #acquire}, or if {@code executor} is null
   * @throws IllegalArgumentException as {@link #acquire}
   */
  public CompletableFuture<LockAcquisition> acquireAsync(
      String node,
      LockOwner owner,
      boolean gangMember,
      Collection<? extends NodeLock> locks,
      Executor executor) {
    return acquireAsync(node, owner, gangMember, locks, executor, null);
  }

  /**
   * {@link #acquireAsync(String, LockOwner, boolean, Collection, Executor)}; a single lock offering
   * {@link NodeLock#versionedAcquire} whose view shows it free is attempted at that version (then
   * as a plain attempt if the object moved), told first to {@code beforeVersionedAttempt} on the
   * attempt's thread; {@link LockAcquisition#version()} names it.
   *
   * @param beforeVersionedAttempt told each version right before the attempt conditioned on it;
   *     must not block; null: plain attempts only
   */
  public CompletableFuture<LockAcquisition> acquireAsync(
      String node,
      LockOwner owner,
      boolean gangMember,
      Collection<? extends NodeLock> locks,
      Executor executor,
      Consumer<String> beforeVersionedAttempt) {
    List<NodeLock> ordered = validate(node, owner, locks);
    Executor checked = CheckedExecutor.of(executor); // its other unchecked exceptions: rejections
    boolean retry = gangMember && policy.retriesEnabled();
    Run run = new Run(node, owner, ordered, retry, checked, beforeVersionedAttempt);
    run.next();
    return run;
  }

  /**
   * Releases every lock in {@code locks} held by {@code owner} on {@code node}, in reverse byte
   * order of the keys (HAMi {@code releaseAllDevices}); every lock is tried even if one fails.
   * Arguments, {@code NullPointerException} and {@code IllegalArgumentException} as {@link
   * #acquire}.
   *
   * @throws LockBackendException the first release failure, later ones attached as suppressed (a
   *     lock's unchecked exception as {@link LockBackendException.Kind#UNAVAILABLE})
   */
  public void releaseAll(String node, LockOwner owner, Collection<? extends NodeLock> locks)
      throws LockBackendException {
    List<NodeLock> ordered = validate(node, owner, locks);
    LockBackendException first = null;
    for (int i = ordered.size() - 1; i >= 0; i--) {
      try {
        ordered.get(i).release(node, owner);
      } catch (LockBackendException | RuntimeException thrown) {
        LockBackendException e =
            thrown instanceof LockBackendException b
                ? b
                : unknown(ordered.get(i), (RuntimeException) thrown);
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

  /**
   * A lock's unchecked exception (a bug of a user's {@link NodeLock}; {@code StoreNodeLock} types
   * its store's): an outcome unknown, as after a timeout.
   */
  private static LockBackendException unknown(NodeLock lock, RuntimeException e) {
    String why = "lock " + lock.key() + " (" + lock + ") threw " + e;
    return new LockBackendException(UNAVAILABLE, why, e);
  }

  /** Attempts per lock of a rollback release refused by an interrupt during the rollback. */
  private static final int ROLLBACK_INTERRUPT_RETRIES = 3;

  /**
   * Releases {@code held} in reverse order with the interrupt flag cleared, then restored (backends
   * refuse an interrupted thread's requests); a release refused by an interrupt is retried.
   */
  private static void rollback(
      String node, LockOwner owner, List<NodeLock> held, Exception original) {
    boolean interrupted = Thread.interrupted();
    try {
      for (int i = held.size() - 1; i >= 0; i--) {
        NodeLock lock = held.get(i);
        for (int attempt = 1; ; attempt++) {
          try {
            lock.release(node, owner);
            break;
          } catch (LockBackendException | RuntimeException e) {
            if (attempt < ROLLBACK_INTERRUPT_RETRIES
                && e instanceof LockBackendException b
                && b.kind() == INTERRUPTED
                && Thread.interrupted()) {
              interrupted = true; // interrupted meanwhile: keep the flag for later, release again
              continue;
            }
            String why =
                "node {}: rollback release of lock {} for {} failed (original error: {}): {}";
            LOG.warn(why, node, lock.key(), owner, original.getMessage(), e.getMessage());
            original.addSuppressed(e);
            break;
          }
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static List<NodeLock> validate(
      String node, LockOwner owner, Collection<? extends NodeLock> locks) {
    requireNonBlank(node, "node");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(locks, "locks");
    checkArgument(!locks.isEmpty(), "locks must not be empty: %s", locks);
    Map<String, NodeLock> byKey = new LinkedHashMap<>();
    for (NodeLock lock : locks) {
      Objects.requireNonNull(lock, "locks element");
      byKey.putIfAbsent(lock.key(), lock);
    }
    List<NodeLock> ordered = new ArrayList<>(byKey.values());
    ordered.sort(Comparator.comparing(NodeLock::key, BYTE_ORDER));
    return ordered;
  }

  /** One {@link Waiter} per distinct release signal of the locks, open for the whole call. */
  private static Map<LockReleaseSignal, Waiter> joinAll(String node, List<NodeLock> ordered) {
    Map<LockReleaseSignal, Waiter> bySignal = new LinkedHashMap<>();
    try {
      for (NodeLock lock : ordered) {
        lock.releaseSignal().ifPresent(s -> bySignal.computeIfAbsent(s, k -> k.join(node)));
      }
      return bySignal;
    } catch (RuntimeException e) {
      bySignal.values().forEach(Waiter::close);
      throw e;
    }
  }

  /** One acquisition; its steps run one at a time, so its fields need no lock but worker's. */
  private final class Run extends CompletableFuture<LockAcquisition> {
    private final String node;
    private final LockOwner owner;
    private final List<NodeLock> ordered;
    private final Executor executor;
    private final long start = time.nanoTime();
    private final long deadline;
    private final Map<LockReleaseSignal, Waiter> waiters; // null: no retries
    private final AtomicBoolean ended = new AtomicBoolean();
    private final Consumer<String> beforeVersioned; // null: plain attempts only
    private Optional<String> version = Optional.empty(); // the winning attempt's condition

    /** The thread running an attempt, interrupted by a cancel; guarded by {@code this}. */
    private Thread worker;

    private int count;
    private int backoffStep; // waits so far without a reliable signal
    private LockContentionException lastContention;
    private NodeLock contended; // the lock the last attempt met contention on
    private List<NodeLock> rolledBack = List.of(); // the locks its rollback released
    private boolean handedWakeUp; // the next attempt is a wake-up's: if it never runs, handOn()
    private long waitBegin; // the wait in progress: start, back-off, whether it stepped it
    private long backoff;
    private boolean backedOff;
    private volatile Future<?> timer;

    Run(
        String node,
        LockOwner owner,
        List<NodeLock> ordered,
        boolean retry,
        Executor executor,
        Consumer<String> beforeVersioned) {
      this.beforeVersioned = beforeVersioned;
      this.node = node;
      this.owner = owner;
      this.ordered = ordered;
      this.executor = executor;
      this.deadline = start + saturatedNanos(policy.retryTimeout());
      this.waiters = retry ? joinAll(node, ordered) : null;
    }

    /** Hands the next attempt to the executor. */
    void next() {
      try {
        executor.execute(this::attempt);
      } catch (RejectedExecutionException e) {
        finish(null, e);
        handOn();
      }
    }

    private void attempt() {
      synchronized (this) {
        if (isDone()) {
          handOn(); // cancelled after the wake-up was handed to this call: it attempts nothing
          return;
        }
        worker = Thread.currentThread();
      }
      handedWakeUp = false; // used: the attempt runs (a cancel from here on interrupts it)
      count++;
      List<String> keys = null;
      Throwable failure = null;
      try {
        keys = attemptAll();
      } catch (Throwable t) {
        failure = t;
      }
      synchronized (this) {
        worker = null; // from here on, cancel() does not interrupt this thread
      }
      if (isCancelled()) {
        Thread.interrupted(); // our cancel-interrupt: neither for the undo nor for the pool thread
      }
      if (failure instanceof LockContentionException c && waiters != null && !isDone()) {
        lastContention = c;
        awaitRetry();
      } else {
        finish(keys, failure);
      }
    }

    /** One all-or-nothing attempt over the ordered locks. */
    private List<String> attemptAll() throws NodeLockException {
      List<NodeLock> held = new ArrayList<>(ordered.size());
      for (NodeLock lock : ordered) {
        try {
          if (ordered.size() == 1 && beforeVersioned != null && acquiredAt(lock)) {
            return List.of(lock.key());
          } else if (waiters != null) {
            lock.acquireWaiting(node, owner);
          } else {
            lock.acquire(node, owner);
          }
          held.add(lock);
        } catch (NodeLockException | RuntimeException thrown) {
          NodeLockException e =
              thrown instanceof NodeLockException n ? n : unknown(lock, (RuntimeException) thrown);
          if (e instanceof LockBackendException b
              && (b.kind() == UNAVAILABLE || b.kind() == INTERRUPTED)) {
            held.add(lock); // its write may have been applied: release it too (owner-checked)
          }
          rollback(node, owner, held, e);
          contended = lock;
          rolledBack = held;
          throw e;
        }
      }
      return held.stream().map(NodeLock::key).toList();
    }

    /** The attempt conditioned on the version the lock's watched view shows it free at, if any. */
    private boolean acquiredAt(NodeLock lock) throws LockBackendException {
      var at = lock.versionedAcquire().orElse(null);
      Optional<String> free = at == null ? Optional.empty() : at.freeVersion(node);
      if (free.isEmpty()) {
        return false;
      }
      beforeVersioned.accept(free.get());
      version = at.acquireAt(node, owner, free.get()).map(o -> free.get());
      return version.isPresent();
    }

    /** Begins the wait before the next attempt; past the deadline, times the call out. */
    private void awaitRetry() {
      waitBegin = time.nanoTime();
      if (deadline - waitBegin <= 0) {
        Duration waited = Duration.ofNanos(waitBegin - start);
        LOG.debug("node {}: {} gave up after {} attempts in {}", node, owner, count, waited);
        var timeout =
            new LockWaitTimeoutException(
                node, policy.retryTimeout(), count, waited, lastContention);
        finish(null, timeout);
        return;
      }
      Waiter waiter = waiterOf(contended);
      if (waiter != null && rolledBack.stream().anyMatch(l -> waiterOf(l) == waiter)) {
        waiter.drain(); // our own rollback's release is no reason to retry at once
      }
      long bound = policy.backoffBound(backoffStep).toNanos();
      // maxPollInterval == pollInterval: HAMi's fixed poll, no jitter
      backoff =
          policy.maxPollInterval().equals(policy.pollInterval())
              ? bound
              : 1 + time.randomBelow(bound);
      backedOff = false;
      slice();
    }

    private Waiter waiterOf(NodeLock lock) {
      return lock.releaseSignal().map(waiters::get).orElse(null);
    }

    /** One slice of the wait: re-asks the signal, then waits for a wake-up or a timer. */
    private void slice() {
      if (isDone()) {
        return;
      }
      long poll = policy.pollInterval().toNanos();
      Waiter waiter = waiterOf(contended);
      boolean reliable = waiter != null && contended.releaseSignal().orElseThrow().isReliable(node);
      if (!reliable && !backedOff) {
        backedOff = true;
        backoffStep = Math.min(backoffStep + 1, 62);
      }
      long now = time.nanoTime();
      long remaining = deadline - now;
      long budget =
          (reliable ? policy.watchedPollInterval().toNanos() : backoff) - (now - waitBegin);
      long slice = Math.min(Math.min(budget, reliable ? poll : budget), remaining);
      if (slice <= 0) {
        next();
      } else if (waiter == null) {
        timer = time.schedule(this::next, slice);
      } else {
        CompletableFuture<Boolean> woken;
        try {
          woken = waiter.awaitAsync(Duration.ofNanos(Math.min(slice, poll)));
        } catch (IllegalStateException e) {
          if (!isDone()) {
            finish(null, e);
          }
          return;
        }
        woken.whenComplete(
            (w, e) -> {
              if (e != null) {
                finish(null, e);
              } else if (w) {
                handedWakeUp = true;
                next();
              } else {
                slice();
              }
            });
      }
    }

    /**
     * A wake-up this call was handed and ends without using (its waiter closed meanwhile, so it
     * cannot pass it on): to the node's next waiter, as an attempt that decided nothing ({@link
     * LockReleaseSignal.Attempt.End#UNDECIDED}; while another attempt here holds the slot, that one
     * answers from after the release, or is handed it on as a release during its flight).
     */
    private void handOn() {
      if (handedWakeUp) {
        handedWakeUp = false;
        contended
            .releaseSignal()
            .flatMap(s -> s.beginAttempt(node))
            .ifPresent(a -> a.end(LockReleaseSignal.Attempt.End.UNDECIDED));
      }
    }

    /** Ends the call: closes the waiters, tells the listener, completes (or undoes). */
    private void finish(List<String> keys, Throwable failure) {
      end(keys != null);
      if (failure != null) {
        completeExceptionally(failure);
      } else if (!complete(
          new LockAcquisition(
              node, owner, keys, Duration.ofNanos(time.nanoTime() - start), count, version))) {
        rollback(node, owner, ordered, new CancellationException("cancelled")); // after winning
      }
    }

    private void end(boolean acquired) {
      if (!ended.compareAndSet(false, true)) {
        return;
      }
      Future<?> t = timer;
      if (t != null) {
        t.cancel(false);
      }
      if (waiters != null) {
        waiters.values().forEach(Waiter::close);
      }
      listener.waited(
          node, owner, Duration.ofNanos(time.nanoTime() - start), Math.max(1, count), acquired);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      if (cancelled) {
        synchronized (this) {
          if (worker != null) {
            worker.interrupt(); // the attempt ends, then undoes what it won
            return true;
          }
        }
        end(false); // waiting: nothing held
      }
      return cancelled;
    }
  }
}
