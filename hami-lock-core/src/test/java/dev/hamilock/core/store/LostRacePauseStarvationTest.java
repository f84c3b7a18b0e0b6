package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.WaitClock;
import dev.hamilock.core.Waiter;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The loser's pause (issue 25 item 4) against a rival process whose queue never lasts a {@link
 * FairReleaseQueue#TURN}: two scheduler processes on one node, each with its own queue fed by the
 * same releases. Process A binds one pod at a time (the next joins while the previous holds, so its
 * queue empties at every win and its 5 s turn never comes); process B has one gang member that lost
 * a race once. B then pauses after every release for 2-4 round trips while A's next waiter takes
 * the lock within one: B's member never attempts while the lock is free and times out after its 28
 * s, although the lock was free at every release. Virtual time, 1 ms steps, deterministic.
 */
class LostRacePauseStarvationTest {

  private static final String NODE = "gpu-1";
  private static final String KEY = "hami.io/mutex.lock";
  private static final long CAS_LATENCY_MS = 2; // a woken waiter's write lands this much later
  private static final long HOLD_MS = 50; // each of A's pods holds the lock this long
  private static final long RETRY_TIMEOUT_MS = 28_000;

  /** One virtual clock for both the queues' timers and the locks' timestamps. */
  private static final class VirtualClock implements WaitClock, InstantSource {
    private static final Instant START = Instant.parse("2026-12-03T11:00:00Z");
    long nanos;

    @Override
    public long nanoTime() {
      return nanos;
    }

    @Override
    public void sleepNanos(long n) {
      nanos += n;
    }

    @Override
    public long randomBelow(long bound) {
      return 0;
    }

    @Override
    public Instant instant() {
      return START.plusNanos(nanos);
    }

    void advanceMillis(long ms) {
      nanos += Duration.ofMillis(ms).toNanos();
    }
  }

  /** One process's view of the shared store: its own queue, fed by every release. */
  private static final class ProcessStore implements LockStore {
    final InMemoryLockStore shared;
    final FairReleaseQueue queue;
    final List<FairReleaseQueue> allQueues;

    ProcessStore(InMemoryLockStore shared, VirtualClock clock, List<FairReleaseQueue> allQueues) {
      this.shared = shared;
      this.queue = FairReleaseQueue.create(n -> true, clock);
      this.allQueues = allQueues;
      allQueues.add(queue);
    }

    @Override
    public Optional<String> read(String node, String key) {
      return shared.read(node, key);
    }

    @Override
    public CasResult createIfAbsent(String node, String key, String value) {
      return shared.createIfAbsent(node, key, value);
    }

    @Override
    public CasResult replaceIfEquals(String node, String key, String expected, String value) {
      return shared.replaceIfEquals(node, key, expected, value);
    }

    @Override
    public boolean deleteIfEquals(String node, String key, String expected) {
      boolean deleted = shared.deleteIfEquals(node, key, expected);
      if (deleted) {
        allQueues.forEach(q -> q.released(node)); // every process's watch sees the release
      }
      return deleted;
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return Optional.of(queue);
    }
  }

  private static StoreNodeLock lock(LockStore store, VirtualClock clock) {
    return StoreNodeLock.create(
        store,
        LockSettings.builder()
            .key(KEY)
            .clock(clock)
            .retryPolicy(RetryPolicy.builder().watchedPollInterval(Duration.ofSeconds(1)).build())
            .build());
  }

  private static boolean woken(Waiter w) {
    return w.awaitAsync(Duration.ZERO).join();
  }

  @Test
  void aMemberThatLostOnceStillGetsTheLockBeforeItsRetryTimeoutAgainstAShortQueueElsewhere()
      throws Exception {
    VirtualClock clock = new VirtualClock();
    clock.advanceMillis(1);
    InMemoryLockStore shared = new InMemoryLockStore();
    List<FairReleaseQueue> queues = new CopyOnWriteArrayList<>();
    ProcessStore a = new ProcessStore(shared, clock, queues);
    ProcessStore b = new ProcessStore(shared, clock, queues);
    StoreNodeLock lockA = lock(a, clock);
    StoreNodeLock lockB = lock(b, clock);

    int pods = 0;
    LockOwner aHolder = LockOwner.of("a", "pod-" + pods);
    lockA.acquire(NODE, aHolder);
    long aAcquiredAt = 0;
    LockOwner aNext = null; // A's pod waiting for the lock
    Waiter aWaiter = null;
    long aLandsAt = -1;

    LockOwner member = LockOwner.of("b", "gang-member");
    long wonAt = -1;
    try (Waiter w = b.queue.join(NODE)) {
      assertThatThrownBy(() -> lockB.acquireWaiting(NODE, member))
          .as("B's member meets A's holder: a race lost to another process")
          .isInstanceOf(LockContentionException.class);
      long wLandsAt = -1;
      long wPollAt = 1_000; // the watched poll interval: an attempt at least once a second

      for (long t = 1; t <= RETRY_TIMEOUT_MS && wonAt < 0; t++) {
        clock.advanceMillis(1);
        if (aNext == null && aHolder != null && t >= aAcquiredAt + 10) {
          aNext = LockOwner.of("a", "pod-" + ++pods); // the next pod joins while one holds
          aWaiter = a.queue.join(NODE);
          LockOwner next = aNext;
          assertThatThrownBy(() -> lockA.acquireWaiting(NODE, next))
              .isInstanceOf(LockContentionException.class);
        }
        if (aHolder != null && t == aAcquiredAt + HOLD_MS) {
          assertThat(lockA.release(NODE, aHolder)).isTrue();
          aHolder = null;
        }
        if (aWaiter != null && aLandsAt < 0 && woken(aWaiter)) {
          aLandsAt = t + CAS_LATENCY_MS;
        }
        if (wLandsAt < 0 && (woken(w) || t >= wPollAt)) {
          wLandsAt = t + CAS_LATENCY_MS;
        }
        // writes landing in the same millisecond: A's first on even pods, B's on odd ones
        boolean bFirst = pods % 2 == 1;
        for (int turn = 0; turn < 2; turn++) {
          boolean bNow = (turn == 0) == bFirst;
          if (bNow && t == wLandsAt) {
            wLandsAt = -1;
            wPollAt = t + 1_000;
            if (attempt(lockB, member)) {
              wonAt = t;
            }
          } else if (!bNow && t == aLandsAt) {
            aLandsAt = -1;
            if (attempt(lockA, aNext)) {
              aHolder = aNext;
              aAcquiredAt = t;
              aNext = null;
              aWaiter.close(); // acquired: the acquisition leaves A's queue, which empties
              aWaiter = null;
            }
          }
        }
      }
    }
    assertThat(wonAt)
        .as(
            "B's member got the lock within its retry timeout (the lock was free at every one of"
                + " A's %d releases)",
            pods)
        .isPositive()
        .isLessThan(RETRY_TIMEOUT_MS);
  }

  private static boolean attempt(StoreNodeLock lock, LockOwner owner) throws LockBackendException {
    try {
      lock.acquireWaiting(NODE, owner);
      return true;
    } catch (LockContentionException e) {
      return false;
    }
  }
}
