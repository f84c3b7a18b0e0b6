package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.testing.generators.Props;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Mutual exclusion of {@link StoreNodeLock} over a witness-returning {@link LockStore}, with
 * generated interleavings: three processes (each its own lock instance, so its own memory) acquire
 * and release one node, a step may let the lock expire (11 min, beyond two lock timeouts), and a
 * step may slip another process's acquire or release in just before the next compare-and-set, so
 * the caller's decision meets a changed value and must go on from the witness. A step may also be
 * the device plugin's release (the current value deleted by another client: the holder's belief
 * ends, as in the hand-off), and an acquire may be a waiter's ({@link
 * StoreNodeLock#acquireWaiting}) with a watched view that is absent, current, or stale (the last
 * value written before the current one: a watch that has not delivered a change yet). Property: at
 * most one process believes it holds the lock, and the stored value names it. Takeovers of expired
 * locks are legitimate and end the previous holder's belief.
 *
 * <p>Teeth (falsification tests): the same property fails for a store whose compare-and-set is not
 * atomic (read, then write) and for a lock that ignores the witness (treats "not written" as
 * written). A lock that takes its own value in a stale view as held (re-enters without a write,
 * while the device plugin has deleted it) fails it too: that was main before 2026-12-02
 * (WatchedViewHintTest#ownValueInAStaleViewIsAskedAboutNotBelieved).
 */
class WitnessProperties {

  private static final String NODE = "worker-1";
  private static final String KEY = dev.hamilock.core.NodeLock.DEFAULT_KEY;
  private static final int PROCESSES = 3;
  private static final int ACTIONS = 4;

  @Test
  void atMostOneProcessBelievesItHoldsTheLock() {
    Props.qt(300)
        .forAll(steps())
        .checkAssert(s -> Props.unchecked(() -> run(s, UnaryOperator.identity(), false)));
  }

  @Test
  void aNonAtomicCompareAndSetIsCaught() {
    Props.Falsified f =
        Props.expectFalsified(
            300,
            q ->
                q.forAll(steps())
                    .checkAssert(
                        s -> Props.unchecked(() -> run(s, UnaryOperator.identity(), true))));
    assertThat(f.cause())
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("believe they hold");
  }

  @Test
  void aLockThatIgnoresTheWitnessIsCaught() {
    Props.Falsified f =
        Props.expectFalsified(
            300,
            q ->
                q.forAll(steps())
                    .checkAssert(
                        s ->
                            Props.unchecked(
                                () -> run(s, WitnessProperties::witnessIgnored, false))));
    assertThat(f.cause())
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("believe they hold");
  }

  private static org.quicktheories.core.Gen<List<Integer>> steps() {
    return lists()
        .of(integers().between(0, PROCESSES * ACTIONS * (PROCESSES + 2) * 3 * 2 - 1))
        .ofSizeBetween(1, 25);
  }

  /**
   * Each step: process {@code x % 3} does {@code (x / 3) % 4} (0 acquire, 1 release, 2 let the lock
   * expire, 3 the device plugin deletes the current value); {@code (x / 12) % 5}, if a process
   * other than the actor, toggles (acquire or release) just before the actor's next
   * compare-and-set; {@code (x / 60) % 3} is the watched view (absent, current, stale) and {@code
   * (x / 180) % 2} whether the acquire is a waiter's.
   */
  private static void run(List<Integer> steps, UnaryOperator<LockStore> mutation, boolean nonAtomic)
      throws Exception {
    MutableClock clock = new MutableClock("2026-08-01T06:00:00Z");
    HookedStore hooked = new HookedStore(nonAtomic);
    LockStore store = mutation.apply(hooked);
    List<StoreNodeLock> locks = new ArrayList<>();
    for (int i = 0; i < PROCESSES; i++) {
      locks.add(
          StoreNodeLock.create(
              store,
              LockSettings.builder()
                  .environment(Map.of())
                  .clock(clock)
                  .livenessCacheTtl(Duration.ZERO)
                  .build()));
    }
    Set<Integer> believers = new HashSet<>();
    for (int x : steps) {
      int actor = x % PROCESSES;
      int action = (x / PROCESSES) % ACTIONS;
      int rival = (x / (PROCESSES * ACTIONS)) % (PROCESSES + 2);
      hooked.view = (x / (PROCESSES * ACTIONS * (PROCESSES + 2))) % 3;
      boolean waiting = (x / (PROCESSES * ACTIONS * (PROCESSES + 2) * 3)) % 2 == 1;
      if (rival < PROCESSES && rival != actor) {
        hooked.beforeNextWrite = () -> toggle(rival, locks, believers, hooked);
      }
      switch (action) {
        case 0 -> acquire(actor, locks, believers, hooked, waiting);
        case 1 -> release(actor, locks, believers, hooked);
        case 2 -> clock.advance(Duration.ofMinutes(11));
        default -> {
          // the device plugin releases the value it observed: whoever held the lock no longer does
          hooked
              .delegate
              .read(NODE, KEY)
              .ifPresent(v -> hooked.delegate.deleteIfEquals(NODE, KEY, v));
          believers.clear();
        }
      }
      hooked.beforeNextWrite = null;
      check(believers, hooked);
    }
  }

  private static LockOwner owner(int i) {
    return LockOwner.of("ns", "process-" + i);
  }

  private static void toggle(
      int i, List<StoreNodeLock> locks, Set<Integer> believers, HookedStore store) {
    try {
      if (believers.contains(i)) {
        release(i, locks, believers, store);
      } else {
        acquire(i, locks, believers, store, false);
      }
    } catch (LockBackendException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void acquire(
      int i, List<StoreNodeLock> locks, Set<Integer> believers, HookedStore store, boolean waiting)
      throws LockBackendException {
    AcquireOutcome outcome;
    try {
      outcome =
          waiting
              ? locks.get(i).acquireWaiting(NODE, owner(i))
              : locks.get(i).acquire(NODE, owner(i));
    } catch (LockContentionException e) {
      return;
    }
    if (outcome == AcquireOutcome.TOOK_OVER_EXPIRED
        || outcome == AcquireOutcome.TOOK_OVER_DANGLING) {
      believers.clear(); // a legitimate takeover: whoever held it no longer does
    }
    believers.add(i);
    check(believers, store);
  }

  private static void release(
      int i, List<StoreNodeLock> locks, Set<Integer> believers, HookedStore store)
      throws LockBackendException {
    if (locks.get(i).release(NODE, owner(i))) {
      believers.remove(i);
    }
    check(believers, store);
  }

  private static void check(Set<Integer> believers, HookedStore store) {
    assertThat(believers.size())
        .as("processes that believe they hold the lock: %s", believers)
        .isLessThanOrEqualTo(1);
    if (believers.size() == 1) {
      int holder = believers.iterator().next();
      Optional<String> stored = store.delegate.read(NODE, KEY);
      assertThat(stored)
          .as("the stored value names the one believer (processes that believe they hold the lock)")
          .hasValueSatisfying(v -> assertThat(v).endsWith(",ns," + owner(holder).name()));
    }
  }

  /**
   * The mutation "the lock ignores the witness": every refused compare-and-set reads as written.
   */
  private static LockStore witnessIgnored(LockStore real) {
    return new LockStore() {
      @Override
      public Optional<String> read(String node, String key) throws LockBackendException {
        return real.read(node, key);
      }

      @Override
      public CasResult createIfAbsent(String node, String key, String value)
          throws LockBackendException {
        real.createIfAbsent(node, key, value);
        return CasResult.written();
      }

      @Override
      public CasResult replaceIfEquals(String node, String key, String expected, String value)
          throws LockBackendException {
        real.replaceIfEquals(node, key, expected, value);
        return CasResult.written();
      }

      @Override
      public boolean deleteIfEquals(String node, String key, String expected)
          throws LockBackendException {
        return real.deleteIfEquals(node, key, expected);
      }
    };
  }

  /**
   * The in-memory store with a hook run once just before the next write (after the caller decided,
   * before its compare-and-set); non-atomic: reads, runs the hook, then writes whatever it read
   * permits, without a precondition.
   */
  private static final class HookedStore implements LockStore {
    final InMemoryLockStore delegate = new InMemoryLockStore();
    final boolean nonAtomic;
    Runnable beforeNextWrite;
    int view; // the watched view: 0 none, 1 the current value, 2 stale
    private final List<String> writes = new ArrayList<>(); // every value written, in order

    HookedStore(boolean nonAtomic) {
      this.nonAtomic = nonAtomic;
    }

    private void hook() {
      Runnable r = beforeNextWrite;
      beforeNextWrite = null;
      if (r != null) {
        r.run();
      }
    }

    @Override
    public Optional<String> read(String node, String key) {
      return delegate.read(node, key);
    }

    @Override
    public CasResult createIfAbsent(String node, String key, String value) {
      if (!nonAtomic) {
        hook();
        return recorded(delegate.createIfAbsent(node, key, value), value);
      }
      Optional<String> seen = delegate.read(node, key);
      hook();
      if (seen.isPresent()) {
        return CasResult.found(seen.get());
      }
      blindWrite(node, key, value);
      return CasResult.written();
    }

    @Override
    public CasResult replaceIfEquals(String node, String key, String expected, String value) {
      if (!nonAtomic) {
        hook();
        return recorded(delegate.replaceIfEquals(node, key, expected, value), value);
      }
      Optional<String> seen = delegate.read(node, key);
      hook();
      if (!seen.equals(Optional.of(expected))) {
        return CasResult.notWritten(seen);
      }
      blindWrite(node, key, value);
      return CasResult.written();
    }

    private void blindWrite(String node, String key, String value) {
      writes.add(value);
      Optional<String> now = delegate.read(node, key);
      if (now.isEmpty()) {
        delegate.createIfAbsent(node, key, value);
      } else {
        delegate.replaceIfEquals(node, key, now.get(), value);
      }
    }

    @Override
    public boolean deleteIfEquals(String node, String key, String expected) {
      hook();
      return delegate.deleteIfEquals(node, key, expected);
    }

    /** Stale: the last value written that is not the current one (a change not yet delivered). */
    @Override
    public Optional<String> watchedValue(String node, String key) {
      Optional<String> now = delegate.read(node, key);
      if (view == 1) {
        return now;
      }
      for (int i = writes.size() - 1; view == 2 && i >= 0; i--) {
        if (!now.equals(Optional.of(writes.get(i)))) {
          return Optional.of(writes.get(i));
        }
      }
      return Optional.empty();
    }

    private CasResult recorded(CasResult result, String value) {
      if (!(result instanceof CasResult.NotWritten)) {
        writes.add(value);
      }
      return result;
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return Optional.empty();
    }
  }
}
