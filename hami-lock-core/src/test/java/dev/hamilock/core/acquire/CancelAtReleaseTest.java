package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.StoreNodeLock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Breaker: a release's wake-up is handed to the oldest waiter under the node queue's lock and
 * delivered outside it. A cancel of that waiter's acquire call (the extender's HTTP deadline)
 * landing in between — or after the delivery but before the woken attempt runs — left the wake-up
 * with the cancelled call, which never attempts: the lock is free and the next member sleeps until
 * its poll (1 s with a reliable watch). The same for a woken attempt its executor rejects. Here no
 * timer ever fires (the clock stands still and its timers never run) and attempts run only when the
 * test drains the executor, so the next member takes the lock only if that release's wake-up
 * reaches it.
 */
class CancelAtReleaseTest {
  private static final String NODE = "gpu-1";
  private static final LockOwner HOLDER = LockOwner.of("team-a", "holder");

  /** Time stands still and timers never fire; the next read may run a hook first. */
  private static final class StillClock implements WaitClock {
    volatile Runnable beforeNextRead;

    @Override
    public long nanoTime() {
      Runnable hook = beforeNextRead;
      beforeNextRead = null;
      if (hook != null) {
        hook.run();
      }
      return 1_000_000_000L;
    }

    @Override
    public void sleepNanos(long nanos) {
      throw new AssertionError("no sleeps here");
    }

    @Override
    public Future<?> schedule(Runnable task, long nanos) {
      return new CompletableFuture<>(); // never fires: only a wake-up ends a wait
    }

    @Override
    public long randomBelow(long bound) {
      return 0;
    }
  }

  /** An in-memory store whose releases the test feeds to the queue itself, as a watch would. */
  private static final class FedStore implements LockStore {
    final InMemoryLockStore delegate = new InMemoryLockStore();
    final FairReleaseQueue queue;
    final AtomicInteger creates = new AtomicInteger();

    FedStore(WaitClock clock) {
      this.queue = FairReleaseQueue.create(n -> false, clock);
    }

    @Override
    public Optional<String> read(String node, String key) {
      return delegate.read(node, key);
    }

    @Override
    public CasResult createIfAbsent(String node, String key, String value) {
      creates.incrementAndGet();
      return delegate.createIfAbsent(node, key, value);
    }

    @Override
    public CasResult replaceIfEquals(String node, String key, String expected, String value) {
      return delegate.replaceIfEquals(node, key, expected, value);
    }

    @Override
    public boolean deleteIfEquals(String node, String key, String expected) {
      return delegate.deleteIfEquals(node, key, expected); // the test tells the queue
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return Optional.of(queue);
    }
  }

  private final StillClock clock = new StillClock();
  private final FedStore store = new FedStore(clock);
  private final StoreNodeLock lock =
      StoreNodeLock.create(store, LockSettings.builder().environment(Map.of()).build());
  private final NodeLockAcquirer acquirer =
      NodeLockAcquirer.create(LockSettings.builder().waitClock(clock).build());
  private final Queue<Runnable> attempts = new ConcurrentLinkedQueue<>();

  private static LockOwner member(int i) {
    return LockOwner.of("team-a", "gang-member-" + i);
  }

  /** Members 1 and 2 (in that order) each attempt once, meet the holder and wait. */
  private List<CompletableFuture<LockAcquisition>> twoWaitingMembers() throws Exception {
    lock.acquire(NODE, HOLDER);
    List<CompletableFuture<LockAcquisition>> members =
        List.of(
            acquirer.acquireAsync(NODE, member(1), true, List.of(lock), attempts::add),
            acquirer.acquireAsync(NODE, member(2), true, List.of(lock), attempts::add));
    runAttempts();
    assertThat(store.queue.waiting(NODE)).isEqualTo(2);
    assertThat(members).noneMatch(CompletableFuture::isDone);
    return members;
  }

  /** The holder's release, the way a node watch reports it: removed, then the queue told. */
  private void release() throws Exception {
    String value = store.read(NODE, NodeLock.DEFAULT_KEY).orElseThrow();
    assertThat(store.deleteIfEquals(NODE, NodeLock.DEFAULT_KEY, value)).isTrue();
  }

  private void runAttempts() {
    for (Runnable r; (r = attempts.poll()) != null; ) {
      r.run();
    }
  }

  @Test
  void aCancelBetweenHandingAWakeUpAndDeliveringItWakesTheNextMember() throws Exception {
    List<CompletableFuture<LockAcquisition>> members = twoWaitingMembers();
    release();
    Thread[] canceller = new Thread[1];
    // released() reads the clock under the node queue's lock, just before it hands the wake-up:
    // the cancel starts there and its close of member 1's waiter waits for that lock
    clock.beforeNextRead =
        () -> {
          canceller[0] = new Thread(() -> members.get(0).cancel(true), "extender-deadline");
          canceller[0].start();
          awaitParked(canceller[0]);
        };
    assertThat(store.queue.released(NODE)).as("handed to member 1").isTrue();
    canceller[0].join(TimeUnit.SECONDS.toMillis(10));
    assertThat(members.get(0)).isCancelled();
    runAttempts();
    assertThat(members.get(1))
        .as("member 2 woken by the release (no timer fires here)")
        .isCompleted();
    assertThat(members.get(1).join().attempts()).isEqualTo(2);
    assertThat(lock.read(NODE)).hasValueSatisfying(r -> assertThat(r.owner()).contains(member(2)));
  }

  @Test
  void aCancelAfterTheWakeUpButBeforeItsAttemptRunsWakesTheNextMember() throws Exception {
    List<CompletableFuture<LockAcquisition>> members = twoWaitingMembers();
    release();
    assertThat(store.queue.released(NODE)).isTrue();
    assertThat(attempts).as("member 1's attempt, queued on the executor").hasSize(1);
    assertThat(members.get(0).cancel(true)).isTrue(); // before that attempt runs
    runAttempts();
    assertThat(members.get(1))
        .as("member 2 woken by the release (no timer fires here)")
        .isCompleted();
    assertThat(members.get(1).join().attempts()).isEqualTo(2);
    assertThat(store.creates).as("member 1's cancelled attempt sent nothing").hasValue(4);
  }

  @Test
  void aWokenAttemptTheExecutorRejectsHandsTheWakeUpOn() throws Exception {
    lock.acquire(NODE, HOLDER);
    AtomicBoolean shutDown = new AtomicBoolean(); // member 1's executor, shut down meanwhile
    CompletableFuture<LockAcquisition> first =
        acquirer.acquireAsync(
            NODE,
            member(1),
            true,
            List.of(lock),
            r -> {
              if (shutDown.get()) {
                throw new RejectedExecutionException("shut down");
              }
              attempts.add(r);
            });
    CompletableFuture<LockAcquisition> second =
        acquirer.acquireAsync(NODE, member(2), true, List.of(lock), attempts::add);
    runAttempts();
    shutDown.set(true);
    release();
    assertThat(store.queue.released(NODE)).as("handed to member 1").isTrue();
    assertThat(first)
        .failsWithin(Duration.ZERO)
        .withThrowableThat()
        .withCauseInstanceOf(RejectedExecutionException.class);
    runAttempts();
    assertThat(second).as("member 2 woken by the release").isCompleted();
  }

  @Test
  void aWakeUpTheWokenMemberUsedIsNotHandedOn() throws Exception {
    List<CompletableFuture<LockAcquisition>> members = twoWaitingMembers();
    release();
    assertThat(store.queue.released(NODE)).isTrue();
    runAttempts();
    assertThat(members.get(0)).isCompleted();
    assertThat(attempts).as("no attempt of member 2").isEmpty();
    assertThat(members.get(1)).isNotDone();
    assertThat(store.queue.waiting(NODE)).isEqualTo(1);
    assertThat(store.creates).as("holder, two refused, one won").hasValue(4);
    members.get(1).cancel(true);
  }

  /** Waits until {@code t} is parked (on the node queue's lock). */
  private static void awaitParked(Thread t) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (t.getState() != Thread.State.WAITING) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "the cancel did not wait for the node queue's lock ("
                + t.getState()
                + "): released() no longer reads the clock under it, the window is not forced");
      }
      Thread.onSpinWait();
    }
  }
}
