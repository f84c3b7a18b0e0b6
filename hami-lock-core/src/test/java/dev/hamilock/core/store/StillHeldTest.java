package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link StoreNodeLock#stillHeld}: the check a binder makes right before its Binding. A holder that
 * is not yet bound is no HAMi#3096-protected holder, so a binder stalled past the lock timeout may
 * have lost the lock; only the exact value this instance wrote proves it never did.
 */
class StillHeldTest {

  private static final String NODE = "gpu-1";
  private static final String KEY = NodeLock.DEFAULT_KEY;
  private static final LockOwner A = LockOwner.of("default", "pod-a");
  private static final LockOwner B = LockOwner.of("default", "pod-b");

  private final MutableClock clock = new MutableClock("2026-06-14T15:00:00Z");
  private final CountingStore store = new CountingStore();
  private final InMemoryLockStore memory = store.delegate;

  /** A lock instance: one process (its own memos), on the shared store and clock. */
  private StoreNodeLock process() {
    return StoreNodeLock.create(
        store,
        LockSettings.builder()
            .environment(Map.of())
            .lockTimeout(Duration.ofMinutes(5))
            .clock(clock)
            .build());
  }

  @Test
  void aValueItWroteAtMostHalfATimeoutAgoIsConfirmedByOneRead() throws Exception {
    StoreNodeLock a = process();
    assertThat(a.acquire(NODE, A)).isEqualTo(AcquireOutcome.ACQUIRED);
    clock.advance(Duration.ofMinutes(2)); // under half the timeout: no re-stamp
    int before = store.calls().size();
    assertThat(a.stillHeld(NODE, A)).isTrue();
    assertThat(store.calls().subList(before, store.calls().size())).containsExactly("read");
    assertThat(memory.read(NODE, KEY)).contains("2026-06-14T15:00:00Z,default,pod-a");
  }

  /**
   * Issue 23, fault 1: a young lock removed by another writer (operator's {@code kubectl annotate
   * node … hami.io/mutex.lock-}, {@code hami-lock-doctor unlock}, HAMi's scheduler with a skewed
   * clock) and acquired by pod B was confirmed from A's own stamp, with no request.
   */
  @Test
  void issue23LockRemovedByAnotherWriterWithinHalfATimeoutIsLost() throws Exception {
    StoreNodeLock a = process();
    StoreNodeLock b = process();
    a.acquire(NODE, A);
    clock.advance(Duration.ofSeconds(1));
    assertThat(memory.deleteIfEquals(NODE, KEY, "2026-06-14T15:00:00Z,default,pod-a")).isTrue();
    assertThat(a.stillHeld(NODE, A)).as("removed, node free").isFalse();
    assertThat(b.acquire(NODE, B)).isEqualTo(AcquireOutcome.ACQUIRED);
    clock.advance(Duration.ofMillis(800)); // A's stamp 1.8 s old, far under half of 5 min
    int before = store.calls().size();
    assertThat(a.stillHeld(NODE, A)).as("removed, then acquired by pod-b").isFalse();
    assertThat(store.calls().subList(before, store.calls().size())).containsExactly("read");
    assertThat(memory.read(NODE, KEY)).contains("2026-06-14T15:00:01Z,default,pod-b"); // untouched
  }

  @Test
  void aBindStalledPastTheTimeoutFindsItsLockTakenOver() throws Exception {
    StoreNodeLock a = process();
    StoreNodeLock b = process();
    a.acquire(NODE, A);
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> b.acquire(NODE, B)))
        .isNotNull();
    clock.advance(Duration.ofMinutes(5).plusSeconds(1)); // pod-a stalls, unbound
    assertThat(b.acquire(NODE, B)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
    assertThat(a.stillHeld(NODE, A)).isFalse();
    assertThat(memory.read(NODE, KEY)).contains("2026-06-14T15:05:01Z,default,pod-b"); // untouched
  }

  @Test
  void aLockTakenOverAndGivenBackIsLostEvenIfTheNodeIsFreeOrOwnedByTheSamePodAgain()
      throws Exception {
    StoreNodeLock a = process();
    StoreNodeLock b = process();
    StoreNodeLock aElsewhere = process(); // e.g. kube-scheduler's retried bind on another replica
    a.acquire(NODE, A);
    memory.replaceIfEquals(
        NODE, KEY, "2026-06-14T15:00:00Z,default,pod-a", "2026-06-14T15:05:01Z,default,pod-b");
    clock.advance(Duration.ofMinutes(6));
    assertThat(a.stillHeld(NODE, A)).as("taken over").isFalse();
    assertThat(b.release(NODE, B)).isTrue();
    assertThat(a.stillHeld(NODE, A)).as("free node").isFalse();
    assertThat(aElsewhere.acquire(NODE, A)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(a.stillHeld(NODE, A))
        .as("same pod, another value: pod-b allocated in between")
        .isFalse();
    assertThat(aElsewhere.stillHeld(NODE, A)).isTrue();
  }

  @Test
  void aValueThisInstanceNeverWroteIsNotProofOfContinuity() throws Exception {
    memory.createIfAbsent(NODE, KEY, "2026-06-14T15:00:00Z,default,pod-a");
    assertThat(process().stillHeld(NODE, A)).isFalse();
  }

  @Test
  void releasedMeansNoLongerHeld() throws Exception {
    StoreNodeLock a = process();
    a.acquire(NODE, A);
    a.release(NODE, A);
    assertThat(a.stillHeld(NODE, A)).isFalse();
  }

  @Test
  void pastHalfTheTimeoutTheLockIsReStampedSoATakeoverNeedsAFreshTimeout() throws Exception {
    StoreNodeLock a = process();
    StoreNodeLock b = process();
    a.acquire(NODE, A);
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> b.acquire(NODE, B)))
        .isNotNull(); // b first sees it
    clock.advance(Duration.ofMinutes(4)); // the binder stalled 4 min, then confirms
    int before = store.calls().size();
    assertThat(a.stillHeld(NODE, A)).isTrue();
    assertThat(store.calls().subList(before, store.calls().size()))
        .hasSize(1); // the compare-and-set
    assertThat(memory.read(NODE, KEY)).contains("2026-06-14T15:04:00Z,default,pod-a");
    clock.advance(Duration.ofMinutes(1).plusSeconds(1)); // 5m1s after b first saw the old value
    assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> b.acquire(NODE, B)))
        .as("the Binding is POSTed under a live lock")
        .isNotNull();
    assertThat(a.stillHeld(NODE, A)).isTrue();
    assertThat(a.release(NODE, A)).as("the re-stamped value is released as the owner's").isTrue();
    assertThat(memory.read(NODE, KEY)).isEmpty();
  }

  @Test
  void theDefaultComparesTheOwnerTheValueNames() throws Exception {
    StoreNodeLock a = process();
    NodeLock plain =
        new NodeLock() {
          @Override
          public String key() {
            return KEY;
          }

          @Override
          public Duration lockTimeout() {
            return a.lockTimeout();
          }

          @Override
          public AcquireOutcome acquire(String node, LockOwner owner)
              throws dev.hamilock.core.LockContentionException,
                  dev.hamilock.core.LockBackendException {
            return a.acquire(node, owner);
          }

          @Override
          public boolean release(String node, LockOwner owner)
              throws dev.hamilock.core.LockBackendException {
            return a.release(node, owner);
          }

          @Override
          public java.util.Optional<dev.hamilock.core.LockRecord> read(String node)
              throws dev.hamilock.core.MalformedLockException,
                  dev.hamilock.core.LockBackendException {
            return a.read(node);
          }
        };
    assertThat(plain.stillHeld(NODE, A)).isFalse();
    plain.acquire(NODE, A);
    assertThat(plain.stillHeld(NODE, A)).isTrue();
    assertThat(plain.stillHeld(NODE, B)).isFalse();
    memory.replaceIfEquals(NODE, KEY, memory.read(NODE, KEY).orElseThrow(), "not-a-lock-value");
    assertThat(plain.stillHeld(NODE, A)).isFalse();
  }
}
