package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.Waiter;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Breaker: a release that lands while this process's one attempt is in flight, after its
 * compare-and-set met the holder. The release's one wake-up goes to the oldest waiter, whose
 * attempt is refused (the slot is taken) and which waits again; the attempt in flight then ends
 * "held" from its stale answer and wakes nobody. The lock is free, no wake-up is left, and every
 * waiter sleeps until its poll (with a reliable watch: the watched poll interval, 1 s) — the lost
 * wake-up the queue promises never happens.
 */
class ReleaseDuringAttemptTest {
  private static final String NODE = "gpu-1";
  private static final String KEY = "hami.io/mutex.lock";

  /** An in-memory store whose first create is decided at once and answers after a gate. */
  private static final class LateAnswerStore implements LockStore {
    final InMemoryLockStore delegate = new InMemoryLockStore();
    final CountDownLatch decided = new CountDownLatch(1);
    final CountDownLatch answer = new CountDownLatch(1);
    boolean first = true;

    @Override
    public Optional<String> read(String node, String key) {
      return delegate.read(node, key);
    }

    @Override
    public CasResult createIfAbsent(String node, String key, String value) {
      CasResult result = delegate.createIfAbsent(node, key, value);
      boolean gate;
      synchronized (this) {
        gate = first;
        first = false;
      }
      if (gate) {
        decided.countDown();
        try {
          assertThat(answer.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
      }
      return result;
    }

    @Override
    public CasResult replaceIfEquals(String node, String key, String expected, String value) {
      return delegate.replaceIfEquals(node, key, expected, value);
    }

    @Override
    public boolean deleteIfEquals(String node, String key, String expected) {
      return delegate.deleteIfEquals(node, key, expected);
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return delegate.releaseSignal();
    }
  }

  private static LockOwner member(int i) {
    return LockOwner.of("team-a", "gang-member-" + i);
  }

  @Test
  void aReleaseDuringAnAttemptThatMetTheHolderStillWakesAWaiter() throws Exception {
    LateAnswerStore store = new LateAnswerStore();
    StoreNodeLock l =
        StoreNodeLock.create(store, LockSettings.builder().environment(Map.of()).build());
    LockReleaseSignal signal = store.releaseSignal().orElseThrow();
    String holder =
        LockRecordCodec.format(LockRecord.of(Instant.now(), LockOwner.of("other", "holder")));
    assertThat(store.delegate.createIfAbsent(NODE, KEY, holder).isWritten()).isTrue();
    try (Waiter w1 = signal.join(NODE);
        Waiter w0 = signal.join(NODE)) {
      CompletableFuture<AcquireOutcome> first =
          OneAttemptInFlightTest.acquiringWaiting(l, NODE, member(0));
      assertThat(store.decided.await(10, TimeUnit.SECONDS)).isTrue(); // refused: the holder
      CompletableFuture<Boolean> woken = w1.awaitAsync(Duration.ofMinutes(1));
      assertThat(store.deleteIfEquals(NODE, KEY, holder)).isTrue(); // the holder's release
      assertThat(woken.get(10, TimeUnit.SECONDS)).as("the release wakes the oldest").isTrue();
      assertThatThrownBy(() -> l.acquireWaiting(NODE, member(1)))
          .isInstanceOf(LockContentionException.class)
          .hasMessageContaining("another waiter of this process is attempting it");
      CompletableFuture<Boolean> again = w1.awaitAsync(Duration.ofMinutes(1));
      store.answer.countDown(); // member 0's attempt ends on its stale answer: the holder
      assertThat(first)
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableThat()
          .havingRootCause()
          .isInstanceOf(LockContentionException.class);
      assertThat(store.read(NODE, KEY)).as("the lock is free").isEmpty();
      assertThat(again.isDone() || w0.drain())
          .as("a waiter is woken to take the free lock (else all sleep until their poll)")
          .isTrue();
      if (again.isDone()) {
        assertThat(again.get()).isTrue();
        assertThat(l.acquireWaiting(NODE, member(1))).isEqualTo(AcquireOutcome.ACQUIRED);
      }
    }
  }
}
