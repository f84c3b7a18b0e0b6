package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.Waiter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 4: one waiter's compare-and-set in flight per node and process ({@link
 * LockReleaseSignal#beginAttempt}). Members released together send one create, not one each; the
 * slot is freed whatever the attempt's end, and only an end that may leave the lock free (neither
 * won nor a holder met) wakes a held-back waiter at once.
 */
class OneAttemptInFlightTest {
  private static final String NODE = "gpu-1";
  private static final String KEY = "hami.io/mutex.lock";

  /** An in-memory store whose first create waits at a gate and may then fail. */
  private static final class GatedStore implements LockStore {
    final InMemoryLockStore delegate = new InMemoryLockStore();

    /** Told of this store's releases in place of the delegate's own queue, if set. */
    final FairReleaseQueue releases;

    final AtomicInteger creates = new AtomicInteger();
    final AtomicInteger createsAt = new AtomicInteger();
    final CountDownLatch inFirstCreate = new CountDownLatch(1);
    final CountDownLatch openGate = new CountDownLatch(1);
    volatile boolean firstCreateFails;

    GatedStore() {
      this(null);
    }

    GatedStore(FairReleaseQueue releases) {
      this.releases = releases;
    }

    @Override
    public Optional<String> read(String node, String key) {
      return delegate.read(node, key);
    }

    @Override
    public CasResult createIfAbsent(String node, String key, String value)
        throws LockBackendException {
      if (creates.incrementAndGet() == 1) {
        inFirstCreate.countDown();
        try {
          assertThat(openGate.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
        if (firstCreateFails) {
          throw new LockBackendException(
              LockBackendException.Kind.UNAVAILABLE, "PATCH node " + node + ": timed out", null);
        }
      }
      return delegate.createIfAbsent(node, key, value);
    }

    @Override
    public CasResult replaceIfEquals(String node, String key, String expected, String value) {
      return delegate.replaceIfEquals(node, key, expected, value);
    }

    @Override
    public boolean deleteIfEquals(String node, String key, String expected) {
      boolean removed = delegate.deleteIfEquals(node, key, expected);
      if (removed && releases != null) {
        releases.released(node);
      }
      return removed;
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return releases != null ? Optional.of(releases) : delegate.releaseSignal();
    }

    /** A watch stand-in: version "7" whenever the lock is free. */
    @Override
    public Optional<String> watchedFreeVersion(String node, String key) {
      return delegate.read(node, key).isEmpty() ? Optional.of("7") : Optional.empty();
    }

    @Override
    public CasResult createIfAbsentAt(String node, String key, String value, String version) {
      createsAt.incrementAndGet();
      return delegate.createIfAbsent(node, key, value);
    }
  }

  /**
   * The system clock's sleeps and timers, but a time that moves only when told: a lost-race pause
   * (1 ms against an in-memory store) cannot end between two steps on a loaded machine.
   */
  private static final class HeldTime implements WaitClock {
    final AtomicLong now = new AtomicLong(System.nanoTime());

    @Override
    public long nanoTime() {
      return now.get();
    }

    @Override
    public void sleepNanos(long nanos) throws InterruptedException {
      WaitClock.SYSTEM.sleepNanos(nanos);
    }

    @Override
    public Future<?> schedule(Runnable task, long nanos) {
      return WaitClock.SYSTEM.schedule(task, nanos);
    }

    @Override
    public long randomBelow(long bound) {
      return 0;
    }
  }

  private static StoreNodeLock lock(LockStore store) {
    return StoreNodeLock.create(store, LockSettings.builder().environment(Map.of()).build());
  }

  private static LockOwner member(int i) {
    return LockOwner.of("team-a", "gang-member-" + i);
  }

  /** Member 0's waiting attempt, started on its own thread and parked in its create. */
  private static CompletableFuture<AcquireOutcome> firstInFlight(GatedStore store, StoreNodeLock l)
      throws InterruptedException {
    CompletableFuture<AcquireOutcome> first = acquiringWaiting(l, NODE, member(0));
    assertThat(store.inFirstCreate.await(10, TimeUnit.SECONDS)).isTrue();
    return first;
  }

  /** {@code owner}'s waiting attempt on {@code node}, on a pool thread. */
  static CompletableFuture<AcquireOutcome> acquiringWaiting(
      StoreNodeLock l, String node, LockOwner owner) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return l.acquireWaiting(node, owner);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
  }

  /** Member 1's waiting attempt while member 0's is in flight: contention; then its wait. */
  private static CompletableFuture<Boolean> heldBack(StoreNodeLock l, Waiter w1) {
    assertThatThrownBy(() -> l.acquireWaiting(NODE, member(1)))
        .isInstanceOf(LockContentionException.class);
    return w1.awaitAsync(Duration.ofMinutes(1));
  }

  private static void endsIn(CompletableFuture<AcquireOutcome> attempt, Class<?> failure) {
    assertThat(attempt)
        .failsWithin(Duration.ofSeconds(10))
        .withThrowableThat()
        .havingRootCause()
        .isInstanceOf(failure);
  }

  @Test
  void membersReleasedTogetherSendOneCreateWhileTheFirstIsInFlight() throws Exception {
    GatedStore store = new GatedStore();
    StoreNodeLock l = lock(store);
    LockReleaseSignal signal = store.releaseSignal().orElseThrow();
    List<Waiter> waiters = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      waiters.add(signal.join(NODE)); // each member joins before its first attempt
    }
    CompletableFuture<AcquireOutcome> first = firstInFlight(store, l);
    for (int i = 1; i < 5; i++) {
      int m = i;
      assertThatThrownBy(() -> l.acquireWaiting(NODE, member(m)))
          .isInstanceOf(LockContentionException.class)
          .hasMessageContaining("another waiter of this process is attempting it");
    }
    assertThat(store.creates).as("creates while member 0's is in flight").hasValue(1);
    store.openGate.countDown();
    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(AcquireOutcome.ACQUIRED);
    // the slot is free again: the next waiting attempt asks the store (and meets member 0)
    assertThatThrownBy(() -> l.acquireWaiting(NODE, member(1)))
        .isInstanceOf(LockContentionException.class)
        .hasMessageContaining(member(0).name());
    assertThat(store.creates).hasValue(2);
    assertThat(l.release(NODE, member(0))).isTrue();
    waiters.forEach(Waiter::close);
  }

  @Test
  void theVersionedAttemptWaitsForTheSlotTooSoNoReadsStartBesideIt() throws Exception {
    GatedStore store = new GatedStore();
    StoreNodeLock l = lock(store);
    LockReleaseSignal signal = store.releaseSignal().orElseThrow();
    List<Waiter> waiters = List.of(signal.join(NODE), signal.join(NODE)); // members 0 and 1
    try {
      assertThat(l.freeVersion(NODE)).as("asking does not take the slot").contains("7");
      assertThat(l.freeVersion(NODE)).contains("7");
      CompletableFuture<AcquireOutcome> first = firstInFlight(store, l);
      assertThat(l.freeVersion(NODE)).as("no version while member 0 attempts").isEmpty();
      assertThat(l.acquireAt(NODE, member(1), "7")).isEmpty();
      assertThat(store.createsAt).as("conditioned creates sent").hasValue(0);
      store.openGate.countDown();
      assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(AcquireOutcome.ACQUIRED);
      assertThat(l.release(NODE, member(0))).isTrue();
      assertThat(l.freeVersion(NODE)).contains("7");
      assertThat(l.acquireAt(NODE, member(1), "7")).contains(AcquireOutcome.ACQUIRED);
      assertThat(store.createsAt).hasValue(1);
    } finally {
      waiters.forEach(Waiter::close);
    }
  }

  @Test
  void anAttemptEndingInABackendErrorWakesAHeldBackWaiterAtOnce() throws Exception {
    GatedStore store = new GatedStore();
    store.firstCreateFails = true;
    StoreNodeLock l = lock(store);
    LockReleaseSignal signal = store.releaseSignal().orElseThrow();
    // member 1 queued first, so a wake-up handed to the oldest is its own, not member 0's
    Waiter w1 = signal.join(NODE);
    Waiter w0 = signal.join(NODE);
    try {
      CompletableFuture<AcquireOutcome> first = firstInFlight(store, l);
      CompletableFuture<Boolean> woken = heldBack(l, w1);
      assertThat(woken).isNotDone();
      store.openGate.countDown(); // member 0's create fails: nobody holds the lock
      endsIn(first, LockBackendException.class);
      assertThat(woken.get(10, TimeUnit.SECONDS)).as("held-back waiter woken").isTrue();
      assertThat(l.acquireWaiting(NODE, member(1))).isEqualTo(AcquireOutcome.ACQUIRED);
    } finally {
      w1.close();
      w0.close();
    }
  }

  @Test
  void anAttemptThatMeetsAHolderLeavesTheHeldBackWaitingForTheRelease() throws Exception {
    GatedStore store = new GatedStore();
    StoreNodeLock l = lock(store);
    LockReleaseSignal signal = store.releaseSignal().orElseThrow();
    String holder =
        LockRecordCodec.format(LockRecord.of(Instant.now(), LockOwner.of("other", "holder")));
    assertThat(store.delegate.createIfAbsent(NODE, KEY, holder).isWritten()).isTrue();
    try (Waiter w1 = signal.join(NODE);
        Waiter w0 = signal.join(NODE)) {
      CompletableFuture<AcquireOutcome> first = firstInFlight(store, l);
      CompletableFuture<Boolean> woken = heldBack(l, w1);
      store.openGate.countDown(); // member 0 meets the live holder
      endsIn(first, LockContentionException.class);
      assertThat(woken).as("no wake-up while the holder holds").isNotDone();
      assertThat(store.delegate.deleteIfEquals(NODE, KEY, holder)).isTrue(); // the release
      assertThat(woken.get(10, TimeUnit.SECONDS)).as("the release wakes the oldest").isTrue();
      assertThat(w0.drain()).isFalse();
    }
  }

  @Test
  void aRaceLostToAnotherProcessPausesThisProcessAfterTheReleaseAndOneLostHereDoesNot()
      throws Exception {
    HeldTime time = new HeldTime();
    GatedStore store = new GatedStore(FairReleaseQueue.create(node -> false, time));
    store.openGate.countDown();
    StoreNodeLock l = lock(store);
    LockReleaseSignal signal = store.releaseSignal().orElseThrow();
    String holder =
        LockRecordCodec.format(LockRecord.of(Instant.now(), LockOwner.of("other", "holder")));
    assertThat(store.delegate.createIfAbsent(NODE, KEY, holder).isWritten()).isTrue();
    try (Waiter w = signal.join(NODE)) {
      assertThatThrownBy(() -> l.acquireWaiting(NODE, member(1)))
          .isInstanceOf(LockContentionException.class);
      assertThat(store.deleteIfEquals(NODE, KEY, holder)).isTrue(); // another process's
      assertThat(signal.leavingTurn(NODE))
          .as("after a race lost to another process, its next release is left to it a moment")
          .isTrue();
      assertThatThrownBy(() -> l.acquireWaiting(NODE, member(1)))
          .as("no request meanwhile")
          .hasMessageContaining("left to other schedulers");
      assertThat(store.creates).hasValue(1);
      time.now.addAndGet(FairReleaseQueue.MAX_PAUSE.toNanos() + 1); // the pause ends
      assertThat(w.awaitAsync(Duration.ofSeconds(10)).get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(l.acquireWaiting(NODE, member(1))).isEqualTo(AcquireOutcome.ACQUIRED);

      assertThatThrownBy(() -> l.acquireWaiting(NODE, member(2)))
          .as("member 1 holds: a value this process wrote")
          .isInstanceOf(LockContentionException.class);
      assertThat(l.release(NODE, member(1))).isTrue();
      assertThat(signal.leavingTurn(NODE)).as("no pause after meeting our own holder").isFalse();
      assertThat(l.acquireWaiting(NODE, member(2))).isEqualTo(AcquireOutcome.ACQUIRED);
    }
  }
}
