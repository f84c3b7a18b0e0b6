package dev.hamilock.bind;

import dev.hamilock.bind.BindCall.Phase;
import dev.hamilock.bind.BindCall.Stop;
import dev.hamilock.bind.BindCall.Subject;
import dev.hamilock.core.GoDuration;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockException;
import dev.hamilock.core.acquire.LockAcquisition;
import dev.hamilock.core.acquire.NodeLockAcquirer;
import dev.hamilock.core.store.StoreNodeLock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node locks of one bind: step 2 of {@link PodBinder} (acquire every key, gang members
 * retrying), step 5 (confirm each is still held right before the Binding) and the release of the
 * clean-up. Each records what it did on the {@link BindCall}.
 */
record BindLocks(NodeLockProvider locks, NodeLockAcquirer acquirer) {
  private static final Logger LOG = LoggerFactory.getLogger(PodBinder.class);

  /**
   * Takes every lock key the pod needs ({@link NodeLockAcquirer}); records the locks, the attempts
   * and the wait.
   *
   * @param executor runs the attempts, the wait holding no thread; null: blocking
   * @param beforeVersionedAttempt told the node version before an attempt conditioned on it
   * @return a future of empty once every lock is held, else of why the walk stops
   */
  CompletableFuture<Optional<Stop>> acquire(
      BindCall c, Executor executor, Consumer<String> beforeVersionedAttempt) {
    Subject s = c.subject();
    List<NodeLock> list = new ArrayList<>(s.keys().size());
    try {
      for (String k : s.keys()) { // a user's provider enters here: its bug or null, this failure
        list.add(Objects.requireNonNull(locks.forKey(k), () -> locks + " answered null for " + k));
      }
    } catch (RuntimeException e) {
      String why = "no node lock for the pod's lock keys " + s.keys() + ": " + e.getMessage();
      return CompletableFuture.completedFuture(Optional.of(new Stop(BindOutcome.FAILED, why, e)));
    }
    LockOwner owner = s.owner();
    Instant began = c.now();
    CompletableFuture<LockAcquisition> f;
    if (executor != null) {
      f = acquirer.acquireAsync(c.node, owner, s.gang(), list, executor, beforeVersionedAttempt);
    } else {
      try {
        f = CompletableFuture.completedFuture(acquirer.acquire(c.node, owner, s.gang(), list));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        f = CompletableFuture.failedFuture(e);
      } catch (NodeLockException e) {
        f = CompletableFuture.failedFuture(e);
      }
    }
    return f.handle(
        (a, failure) -> {
          c.took(Phase.LOCK_WAIT, began);
          if (failure == null) {
            c.held = list;
            c.attempts = a.attempts();
            c.lockedAt = a.version();
            return Optional.empty();
          }
          return Optional.of(stop(c, owner, failure));
        });
  }

  /** Why a failed acquisition stops the walk. */
  private static Stop stop(BindCall c, LockOwner owner, Throwable failure) {
    Throwable e = failure instanceof CompletionException ? failure.getCause() : failure;
    if (e instanceof LockWaitTimeoutException t) {
      LOG.debug(
          "node {}: pod {} gave up waiting for the node lock: {}", c.node, owner, t.getMessage());
      c.attempts = t.attempts();
      return new Stop(BindOutcome.TIMED_OUT, t.getMessage(), t);
    } else if (e instanceof LockContentionException n) {
      LOG.debug("node {}: pod {} met node lock contention: {}", c.node, owner, n.getMessage());
      c.attempts = 1;
      return new Stop(BindOutcome.CONTENDED, n.getMessage(), n);
    } else if (e instanceof LockBackendException b) {
      c.attempts = Math.max(1, c.attempts);
      return new Stop(outcomeOf(b), b.getMessage(), b);
    } else if (e instanceof NodeLockException n) {
      return new Stop(BindOutcome.FAILED, n.getMessage(), n);
    } else if (e instanceof InterruptedException || e instanceof CancellationException) {
      String why = "interrupted while waiting for the node lock on " + c.node;
      return new Stop(BindOutcome.FAILED, why, e);
    } else if (e instanceof RejectedExecutionException r) {
      String why = "no thread for the next node lock attempt on " + c.node + ": " + r.getMessage();
      return new Stop(BindOutcome.FAILED, why, r);
    }
    throw failure instanceof CompletionException ce ? ce : new CompletionException(e);
  }

  /**
   * Step 5 started on {@code executor} beside step 3's pod LISTs, once the allocation is on the pod
   * (write-first): a lock lost after it finds that pod in flight, as one lost between a
   * confirmation and the Binding ({@link #confirm}). {@link #confirmed} uses it if it began at most
   * {@link #fresh} before the Binding, else confirms again; {@link #release} waits for it first (it
   * may re-stamp the lock).
   */
  Confirmation confirmBeside(BindCall c, Executor executor) {
    Confirmation k =
        new Confirmation(c.now(), System.nanoTime(), new FutureTask<>(() -> confirm(c)));
    try {
      // not the task itself: an executor's owner may cancel the Futures it queued (shutdownNow),
      // and a cancelled task would have no answer for confirmed nor an end for settle to await
      executor.execute(k.task::run);
    } catch (RejectedExecutionException e) {
      // run by confirmed or release on the calling thread
    }
    return k;
  }

  /**
   * A confirmation begun at {@code began} by the binder's clock, {@code beganNanos} by {@link
   * System#nanoTime} (the binder's clock need not follow real time), running or done.
   */
  record Confirmation(Instant began, long beganNanos, FutureTask<Optional<Stop>> task) {
    /** Its answer, run here if no thread has started it; waits through interrupts. */
    Optional<Stop> await() {
      task.run(); // no-op if started or done elsewhere
      boolean interrupted = false;
      try {
        while (true) {
          try {
            return task.get();
          } catch (InterruptedException e) {
            interrupted = true;
          } catch (ExecutionException e) {
            if (e.getCause() instanceof Error err) {
              throw err;
            }
            throw new IllegalStateException(e.getCause()); // confirm throws no exception
          }
        }
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /**
   * Step 5 right before the Binding: the confirmation begun beside the reads if at most {@link
   * #fresh} old, else {@link #confirm} now. A thread interrupted while it waited for that
   * confirmation stops here (FAILED, {@code INTERRUPTED}), as {@link #confirm} would on it.
   */
  Optional<Stop> confirmed(BindCall c) {
    Optional<Confirmation> k = c.confirmation;
    c.confirmation = Optional.empty();
    if (k.isPresent()) {
      Optional<Stop> lost = k.get().await();
      if (lost.isEmpty() && Thread.currentThread().isInterrupted()) {
        // as the confirmation on this thread would end: its read refused (the ports refuse every
        // request of an interrupted thread), so no Binding on a bind its caller abandoned
        String why = "interrupted before binding pod %s to %s".formatted(c.podKey(), c.node);
        return Optional.of(
            new Stop(BindOutcome.FAILED, FlowFailure.of(FlowFailure.Kind.INTERRUPTED, why)));
      }
      // a stale answer holds only if the lock was lost; a failure to read is read again
      Duration fresh = fresh(c);
      boolean young = // by either clock: a fixed or coarse binder clock must not keep it young
          !c.now().isAfter(k.get().began().plus(fresh))
              && System.nanoTime() - k.get().beganNanos() <= fresh.toNanos();
      if (lost.filter(s -> s.outcome() == BindOutcome.CONTENDED).isPresent() || young) {
        return lost;
      }
      LOG.debug("node {}: confirming the locks of pod {} again before binding", c.node, c.podKey());
    }
    return confirm(c);
  }

  /**
   * How old a confirmation may be at the Binding: 1 s, or a quarter of the shortest held lock's
   * timeout if less. A confirmed lock is at most half a timeout old ({@link
   * StoreNodeLock#firstLost} re-stamps older ones), so no takeover of an expired lock fits in it.
   */
  private static Duration fresh(BindCall c) {
    Duration fresh = Duration.ofSeconds(1);
    for (NodeLock l : c.held) {
      Duration quarter = l.lockTimeout().dividedBy(4);
      fresh = quarter.compareTo(fresh) < 0 ? quarter : fresh;
    }
    return fresh;
  }

  /**
   * Step 5: every held lock must still be this pod's ({@link StoreNodeLock#firstLost}, one node
   * read): a bind stalled past the lock timeout may have lost it to a takeover (HAMi#3096 guards
   * bound holders only) or another writer. A Binding cannot be conditional on a node annotation; a
   * lock lost after this check leaves this pod in flight, which the next holder's binder sees (the
   * allocation was written first); {@code hami-lock-doctor audit} AU07 reports what remains.
   *
   * @return empty if every lock is still held, else why the walk stops (CONTENDED when lost)
   */
  Optional<Stop> confirm(BindCall c) {
    Optional<NodeLock> lost;
    try {
      lost = StoreNodeLock.firstLost(c.node, c.subject().owner(), c.held);
    } catch (LockBackendException e) {
      String why =
          "cannot confirm node locks %s on %s before binding pod %s: %s"
              .formatted(c.subject().keys(), c.node, c.podKey(), e.getMessage());
      return Optional.of(new Stop(outcomeOf(e), why, e));
    } catch (RuntimeException e) { // a NodeLock's bug (not StoreNodeLock): unconfirmed
      String why =
          "cannot confirm node locks %s on %s before binding pod %s: %s"
              .formatted(c.subject().keys(), c.node, c.podKey(), e);
      return Optional.of(new Stop(BindOutcome.FAILED, why, e));
    }
    if (lost.isEmpty()) {
      return Optional.empty();
    }
    Duration took = Duration.between(c.started(), c.now()).truncatedTo(ChronoUnit.SECONDS);
    String why =
        ("node lock %s on %s is no longer held by pod %s (taken over after it expired, or"
                + " removed by another writer: the bind took %s, lock timeout %s); not binding"
                + " on a lost lock")
            .formatted(
                lost.get().key(),
                c.node,
                c.podKey(),
                GoDuration.formatSaturated(took),
                GoDuration.formatSaturated(lost.get().lockTimeout()));
    LOG.warn("{}", why);
    return Optional.of(new Stop(BindOutcome.CONTENDED, why, null));
  }

  /**
   * Waits for the confirmation begun beside the reads, if still pending, and drops it: every end of
   * the bind that does not use it ({@link #release}, an answer kept for the hand-off) settles it
   * first, so that it never reads or re-stamps the lock after the bind answered.
   */
  void settle(BindCall c) {
    c.confirmation.ifPresent(Confirmation::await); // confirm turns every exception into a Stop
    c.confirmation = Optional.empty();
  }

  /**
   * Releases every held lock by exact owner; a failure is recorded as a clean-up problem. A pending
   * confirmation is awaited first (it may re-stamp the lock); an interrupt that came during the
   * clean-up (while it waited, {@link Confirmation#await} sets the flag again) is kept for the
   * caller but not for the release, which the ports would refuse ({@link Uninterrupted}).
   */
  void release(BindCall c) {
    settle(c);
    boolean interrupted = Thread.interrupted();
    try {
      releaseHeld(c);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void releaseHeld(BindCall c) {
    if (c.held.isEmpty()) {
      return;
    }
    try {
      acquirer.releaseAll(c.node, c.subject().owner(), c.held);
      c.held = List.of();
    } catch (LockBackendException e) {
      if (e.kind() == LockBackendException.Kind.NOT_FOUND) {
        c.held = List.of(); // the lock went away with the node
        return;
      }
      c.problems.add(
          "cannot release the node locks %s on %s: %s"
              .formatted(c.subject().keys(), c.node, e.getMessage()));
    }
  }

  private static BindOutcome outcomeOf(LockBackendException e) {
    return e.kind() == LockBackendException.Kind.NOT_FOUND
        ? BindOutcome.NODE_NOT_FOUND
        : BindOutcome.FAILED;
  }
}
