package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.OwnerLiveness;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Issue 13 item 2 (client-go#448, fabric8#7160): a writer's clock skew must not make a live lock
 * look expired. Expiry needs both the stamp and this process's first observation of the exact value
 * to be older than the lock timeout; a stamp more than one timeout in the future counts as no
 * information.
 */
class ClockSkewTest {

  private static final String NODE = "gpu-1";
  private static final String KEY = "hami.io/mutex.lock";
  private static final LockOwner ME = LockOwner.of("default", "pod-b");

  private final MutableClock clock = new MutableClock("2026-06-14T15:00:00Z");
  private final InMemoryLockStore store = new InMemoryLockStore();

  private StoreNodeLock lock() {
    return StoreNodeLock.create(
        store,
        LockSettings.builder()
            .lockTimeout(Duration.ofMinutes(5))
            .clock(clock)
            .ownerLiveness(OwnerLiveness.assumeAlive())
            .livenessCacheTtl(Duration.ZERO)
            .build());
  }

  private void writeStampedAt(Instant stamp) {
    store.createIfAbsent(NODE, KEY, stamp + ",default,pod-a");
  }

  /** Writer 6 min behind: HAMi would take over at once; we wait one timeout from first sight. */
  @Test
  void aSlowWriterClockCannotMakeALiveLockLookExpired() throws Exception {
    StoreNodeLock l = lock();
    writeStampedAt(clock.instant().minus(Duration.ofMinutes(6)));
    assertThatThrownBy(() -> l.acquire(NODE, ME))
        .isInstanceOfSatisfying(
            LockContentionException.class,
            e -> assertThat(e.getMessage()).contains("first seen by this process 0s ago"));
    clock.advance(Duration.ofMinutes(5));
    assertThatThrownBy(() -> l.acquire(NODE, ME))
        .as("exactly one timeout after first sight")
        .isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofSeconds(1));
    assertThat(l.acquire(NODE, ME)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
  }

  /** Writer 3 min ahead (within one timeout): the stamp still decides, held timeout + skew. */
  @Test
  void aFastWriterClockWithinOneTimeoutIsHeldUntilItsStampExpires() throws Exception {
    StoreNodeLock l = lock();
    writeStampedAt(clock.instant().plus(Duration.ofMinutes(3)));
    assertThatThrownBy(() -> l.acquire(NODE, ME)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(8));
    assertThatThrownBy(() -> l.acquire(NODE, ME))
        .as("stamp age exactly 5m")
        .isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofSeconds(1));
    assertThat(l.acquire(NODE, ME)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
  }

  /** Writer 6 min ahead (more than one timeout): held at most two timeouts after first sight. */
  @Test
  void aStampFurtherAheadThanOneTimeoutKeepsTheLockAtMostTwoTimeoutsAfterFirstSight()
      throws Exception {
    StoreNodeLock l = lock();
    writeStampedAt(clock.instant().plus(Duration.ofMinutes(6)));
    assertThatThrownBy(() -> l.acquire(NODE, ME)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(10));
    assertThatThrownBy(() -> l.acquire(NODE, ME))
        .as("exactly two timeouts after first sight")
        .isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofSeconds(1));
    assertThat(l.acquire(NODE, ME)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
  }

  /**
   * A restarted process (a new lock instance) counts afresh: it waits one more timeout, at most.
   */
  @Test
  void aRestartedProcessWaitsAtMostOneTimeout() throws Exception {
    writeStampedAt(clock.instant().minus(Duration.ofHours(2)));
    StoreNodeLock before = lock();
    assertThatThrownBy(() -> before.acquire(NODE, ME)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(4));
    StoreNodeLock restarted = lock();
    assertThatThrownBy(() -> restarted.acquire(NODE, ME))
        .isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(5).plusSeconds(1));
    assertThat(restarted.acquire(NODE, ME)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
  }

  /** The same text written again after this process saw the node free is observed afresh. */
  @Test
  void aValueWrittenAgainAfterTheNodeWasSeenFreeIsCountedFromItsNewAppearance() throws Exception {
    StoreNodeLock l = lock();
    String value = clock.instant().minus(Duration.ofHours(1)) + ",default,pod-a";
    store.createIfAbsent(NODE, KEY, value);
    assertThatThrownBy(() -> l.acquire(NODE, ME)).isInstanceOf(LockContentionException.class);
    store.deleteIfEquals(NODE, KEY, value);
    clock.advance(Duration.ofMinutes(10));
    assertThat(l.acquire(NODE, ME)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(l.release(NODE, ME)).isTrue();
    store.createIfAbsent(NODE, KEY, value);
    assertThatThrownBy(() -> l.acquire(NODE, ME))
        .as("not expired by the first appearance 10 min ago")
        .isInstanceOf(LockContentionException.class);
  }
}
