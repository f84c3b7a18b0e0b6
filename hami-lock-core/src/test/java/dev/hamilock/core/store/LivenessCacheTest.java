package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.OwnerLiveness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The ALIVE cache of {@link StoreNodeLock}: one owner lookup per exact lock value per TTL (injected
 * clock), gone answers and errors never cached, a dangling owner still detected once the TTL has
 * passed, concurrent checks of one value shared.
 */
class LivenessCacheTest {

  private static final String NODE = "worker-3";
  private static final String KEY = dev.hamilock.core.NodeLock.DEFAULT_KEY;
  private static final LockOwner WAITER = LockOwner.of("ns", "waiter");
  private static final String HELD = "2026-08-01T06:00:00Z,ns,holder";

  private final MutableClock clock = new MutableClock("2026-08-01T06:00:00Z");
  private final InMemoryLockStore store = new InMemoryLockStore();
  private final AtomicInteger checks = new AtomicInteger();
  private final AtomicReference<OwnerLiveness.State> holderState =
      new AtomicReference<>(OwnerLiveness.State.ALIVE);

  private StoreNodeLock lock(Duration ttl) {
    return StoreNodeLock.create(
        store,
        LockSettings.builder()
            .environment(Map.of())
            .clock(clock)
            .livenessCacheTtl(ttl)
            .ownerLiveness(
                o -> {
                  checks.incrementAndGet();
                  return holderState.get();
                })
            .build());
  }

  @Test
  void anAliveAnswerIsReusedForTheSameValueUntilTheTtlHasPassed() {
    store.createIfAbsent(NODE, KEY, HELD);
    StoreNodeLock l = lock(Duration.ofSeconds(1));
    for (int i = 0; i < 5; i++) {
      assertThatThrownBy(() -> l.acquire(NODE, WAITER)).isInstanceOf(LockContentionException.class);
    }
    assertThat(checks).hasValue(1);
    clock.advance(Duration.ofMillis(999));
    assertThatThrownBy(() -> l.acquire(NODE, WAITER)).isInstanceOf(LockContentionException.class);
    assertThat(checks).hasValue(1);
    clock.advance(Duration.ofMillis(1)); // age == TTL: asked again
    assertThatThrownBy(() -> l.acquire(NODE, WAITER)).isInstanceOf(LockContentionException.class);
    assertThat(checks).hasValue(2);
  }

  @Test
  void aHolderThatDiesWithinTheTtlIsTakenOverOnceTheTtlHasPassed() throws Exception {
    store.createIfAbsent(NODE, KEY, HELD);
    StoreNodeLock l = lock(Duration.ofSeconds(1));
    assertThatThrownBy(() -> l.acquire(NODE, WAITER)).isInstanceOf(LockContentionException.class);
    holderState.set(OwnerLiveness.State.NOT_FOUND); // the holder pod is deleted
    clock.advance(Duration.ofMillis(500));
    assertThatThrownBy(() -> l.acquire(NODE, WAITER))
        .as("cached ALIVE hides the death within the TTL")
        .isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMillis(500));
    assertThat(l.acquire(NODE, WAITER)).isEqualTo(AcquireOutcome.TOOK_OVER_DANGLING);
    assertThat(checks).hasValue(2);
    assertThat(store.read(NODE, KEY)).contains("2026-08-01T06:00:01Z,ns,waiter");
  }

  @Test
  void zeroTtlAsksOnEveryAttemptAsHamiDoes() throws Exception {
    store.createIfAbsent(NODE, KEY, HELD);
    StoreNodeLock l = lock(Duration.ZERO);
    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(() -> l.acquire(NODE, WAITER)).isInstanceOf(LockContentionException.class);
    }
    assertThat(checks).hasValue(3);
    holderState.set(OwnerLiveness.State.TERMINATING);
    assertThat(l.acquire(NODE, WAITER)).isEqualTo(AcquireOutcome.TOOK_OVER_DANGLING);
  }

  @Test
  void aNewValueOfTheSameHolderIsCheckedAgain() throws Exception {
    String restamped = "2026-08-01T06:00:01Z,ns,holder";
    String again = "2026-08-01T06:00:02Z,ns,holder";
    store.createIfAbsent(NODE, KEY, HELD);
    StoreNodeLock l = lock(Duration.ofMinutes(1));
    assertThatThrownBy(() -> l.acquire(NODE, WAITER)).isInstanceOf(LockContentionException.class);
    store.replaceIfEquals(NODE, KEY, HELD, restamped); // the holder re-enters (multi-vendor)
    assertThatThrownBy(() -> l.acquire(NODE, WAITER)).isInstanceOf(LockContentionException.class);
    assertThat(checks).hasValue(2);
    holderState.set(OwnerLiveness.State.SUCCEEDED);
    store.replaceIfEquals(NODE, KEY, restamped, again);
    assertThat(l.acquire(NODE, WAITER)).isEqualTo(AcquireOutcome.TOOK_OVER_DANGLING);
    assertThat(checks).hasValue(3);
  }

  @Test
  void goneAnswersAndErrorsAreNeverCached() {
    store.createIfAbsent(NODE, KEY, HELD);
    LockBackendException down =
        new LockBackendException(LockBackendException.Kind.UNAVAILABLE, "apiserver 500", null);
    AtomicInteger calls = new AtomicInteger();
    StoreNodeLock l =
        StoreNodeLock.create(
            store,
            LockSettings.builder()
                .environment(Map.of())
                .clock(clock)
                .ownerLiveness(
                    o -> {
                      if (calls.incrementAndGet() == 1) {
                        throw down;
                      }
                      return OwnerLiveness.State.ALIVE;
                    })
                .build());
    assertThatThrownBy(() -> l.acquire(NODE, WAITER))
        .isInstanceOf(LockBackendException.class)
        .hasMessageContaining("apiserver 500");
    assertThatThrownBy(() -> l.acquire(NODE, WAITER)).isInstanceOf(LockContentionException.class);
    assertThat(calls).hasValue(2);
    assertThatThrownBy(() -> l.acquire(NODE, WAITER)).isInstanceOf(LockContentionException.class);
    assertThat(calls).hasValue(2);
  }

  @Test
  void concurrentWaitersShareOneCheckOfTheSameValue() throws Exception {
    store.createIfAbsent(NODE, KEY, HELD);
    int waiters = 8;
    List<Thread> threads = new ArrayList<>();
    AtomicInteger calls = new AtomicInteger();
    StoreNodeLock l =
        StoreNodeLock.create(
            store,
            LockSettings.builder()
                .environment(Map.of())
                .clock(clock)
                .ownerLiveness(
                    o -> {
                      if (calls.incrementAndGet() == 1) {
                        // hold the first check until every other waiter is blocked behind it (or,
                        // without sharing, has made its own check)
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                        while (System.nanoTime() < deadline
                            && calls.get() == 1
                            && !othersBlocked(threads)) {
                          Thread.onSpinWait();
                        }
                      }
                      return OwnerLiveness.State.ALIVE;
                    })
                .build());
    ExecutorService pool =
        Executors.newFixedThreadPool(
            waiters,
            r -> {
              Thread t = new Thread(r);
              synchronized (threads) {
                threads.add(t);
              }
              return t;
            });
    try {
      List<Future<Throwable>> results = new ArrayList<>();
      for (int i = 0; i < waiters; i++) {
        LockOwner w = LockOwner.of("ns", "waiter-" + i);
        results.add(
            pool.submit(
                () -> {
                  try {
                    l.acquire(NODE, w);
                    return null;
                  } catch (Exception e) {
                    return e;
                  }
                }));
      }
      for (Future<Throwable> f : results) {
        assertThat(f.get(30, TimeUnit.SECONDS)).isInstanceOf(LockContentionException.class);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(calls).hasValue(1);
  }

  private static boolean othersBlocked(List<Thread> threads) {
    synchronized (threads) {
      if (threads.size() < 8) {
        return false;
      }
      return threads.stream()
          .filter(t -> t != Thread.currentThread())
          .allMatch(t -> t.getState() == Thread.State.BLOCKED);
    }
  }

  @Test
  void negativeTtlIsRejectedNamingTheSetting() {
    assertThatThrownBy(
            () ->
                StoreNodeLock.create(
                    store,
                    LockSettings.builder()
                        .environment(Map.of())
                        .livenessCacheTtl(Duration.ofMillis(-1))
                        .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("livenessCacheTtl");
    assertThatThrownBy(
            () ->
                StoreNodeLock.create(
                    store,
                    LockSettings.builder().environment(Map.of()).livenessCacheTtl(null).build()))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("livenessCacheTtl");
  }

  // ---- the collaborator on its own -------------------------------------------------------

  private LivenessCache cache(Duration ttl) {
    return new LivenessCache(
        o -> {
          checks.incrementAndGet();
          return holderState.get();
        },
        ttl,
        clock,
        2);
  }

  @Test
  void cacheAloneReusesAliveForTheTtlPerExactValueAndNode() throws Exception {
    LivenessCache c = cache(Duration.ofSeconds(1));
    LockOwner holder = LockOwner.of("ns", "holder");
    c.status(NODE, HELD, holder);
    c.status(NODE, HELD, holder);
    assertThat(checks).hasValue(1);
    c.status("other-node", HELD, holder);
    c.status(NODE, HELD + "x", holder);
    assertThat(checks).as("another node, another value: new keys").hasValue(3);
    clock.advance(Duration.ofSeconds(1));
    c.status(NODE, HELD, holder);
    assertThat(checks).as("TTL passed").hasValue(4);
  }

  @Test
  void cacheAloneNeverKeepsAGoneAnswerAndForgetsAValueThatLeft() throws Exception {
    LivenessCache c = cache(Duration.ofSeconds(1));
    LockOwner holder = LockOwner.of("ns", "holder");
    holderState.set(OwnerLiveness.State.NOT_FOUND);
    assertThat(c.status(NODE, HELD, holder).state()).isEqualTo(OwnerLiveness.State.NOT_FOUND);
    holderState.set(OwnerLiveness.State.ALIVE);
    c.status(NODE, HELD, holder);
    assertThat(checks).hasValue(2);
    c.gone(NODE, HELD);
    c.status(NODE, HELD, holder);
    assertThat(checks).as("asked again after the value left").hasValue(3);
  }

  @Test
  void cacheAloneWithZeroTtlAsksEveryTime() throws Exception {
    LivenessCache c = cache(Duration.ZERO);
    LockOwner holder = LockOwner.of("ns", "holder");
    c.status(NODE, HELD, holder);
    c.status(NODE, HELD, holder);
    assertThat(checks).hasValue(2);
  }

  @Test
  void cacheAloneTurnsAThrowingOrNullPortIntoARejection() {
    LockOwner holder = LockOwner.of("ns", "holder");
    LivenessCache throwing =
        new LivenessCache(
            o -> {
              throw new IllegalStateException("boom");
            },
            Duration.ofSeconds(1),
            clock,
            2);
    assertThatThrownBy(() -> throwing.status(NODE, HELD, holder))
        .isInstanceOfSatisfying(
            LockBackendException.class,
            e -> assertThat(e.kind()).isEqualTo(LockBackendException.Kind.REJECTED))
        .hasMessageContaining("boom");
    LivenessCache nulls =
        new LivenessCache(
            new OwnerLiveness() {
              @Override
              public State check(LockOwner owner) {
                return null;
              }
            },
            Duration.ZERO,
            clock,
            2);
    assertThatThrownBy(() -> nulls.status(NODE, HELD, holder))
        .isInstanceOf(LockBackendException.class)
        .hasMessageContaining("null");
  }
}
