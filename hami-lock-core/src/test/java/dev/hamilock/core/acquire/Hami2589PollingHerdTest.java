package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.integers;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.testing.generators.Props;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Issue 13 item 7 (HAMi#2589, polling herd): without the watch, waiters used to re-try every 100 ms
 * each. The poll is now the first step of a full-jitter exponential back-off (100 → 200 → 400 → 800
 * ms, cap 1 s) that never sleeps past the retry deadline. Measured on virtual time ({@link
 * VirtualTime}: injected clock, sleeper and seeded jitter; requests take no time), with the same
 * lock stack as over Kubernetes (one store call = one API request: a contended attempt is a create
 * and a read, plus the holder-liveness GET cached 1 s).
 */
class Hami2589PollingHerdTest {

  private static final String NODE = "gpu-1";
  private static final int MEMBERS = 8;
  private static final Duration HOLD = Duration.ofMillis(500);

  /** Result of one simulated queue. */
  record Run(long requests, long attempts, Duration drained) {}

  /** 8 gang members start together, each holds the lock 500 ms once; no release signal. */
  static Run simulate(RetryPolicy policy, long seed) throws Exception {
    VirtualTime time = new VirtualTime(Instant.parse("2026-06-14T15:00:00Z"), seed);
    AtomicLong requests = new AtomicLong();
    LockStore store = new CountingStore(new InMemoryLockStore(), requests);
    OwnerLiveness liveness =
        new OwnerLiveness() {
          @Override
          public State check(LockOwner owner) {
            requests.incrementAndGet();
            return State.ALIVE;
          }
        };
    NodeLock lock =
        StoreNodeLock.create(
            store,
            LockSettings.builder()
                .environment(java.util.Map.of())
                .clock(time)
                .ownerLiveness(liveness)
                .build());
    NodeLockAcquirer acquirer =
        NodeLockAcquirer.create(LockSettings.builder().retryPolicy(policy).waitClock(time).build());
    ExecutorService pool = Executors.newFixedThreadPool(MEMBERS);
    AtomicLong attempts = new AtomicLong();
    try {
      for (int i = 0; i < MEMBERS; i++) {
        time.register();
      }
      List<Future<?>> members = new ArrayList<>();
      for (int i = 0; i < MEMBERS; i++) {
        LockOwner owner = LockOwner.of("gangs", "w" + i);
        members.add(
            pool.submit(
                () -> {
                  try {
                    attempts.addAndGet(
                        acquirer.acquire(NODE, owner, true, List.of(lock)).attempts());
                    time.sleepNanos(HOLD.toNanos());
                    lock.release(NODE, owner);
                  } finally {
                    time.deregister();
                  }
                  return null;
                }));
      }
      for (Future<?> f : members) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    return new Run(requests.get(), attempts.get(), Duration.ofNanos(time.nanoTime()));
  }

  /** HAMi's fixed 100 ms poll (no back-off, no jitter): the baseline, in the same run. */
  static RetryPolicy fixedPoll() {
    return RetryPolicy.builder().maxPollInterval(RetryPolicy.DEFAULT_POLL_INTERVAL).build();
  }

  @Test
  void eightMembersHolding500msCostFarFewerRequestsWithTheBackOff() throws Exception {
    int seeds = 20;
    long before = 0;
    long after = 0;
    long drainedBefore = 0;
    long drainedAfter = 0;
    long maxAfterDrain = 0;
    for (long seed = 1; seed <= seeds; seed++) {
      Run b = simulate(fixedPoll(), seed);
      Run a = simulate(RetryPolicy.defaults(), seed);
      before += b.requests();
      after += a.requests();
      drainedBefore += b.drained().toMillis();
      drainedAfter += a.drained().toMillis();
      maxAfterDrain = Math.max(maxAfterDrain, a.drained().toMillis());
      assertThat(a.drained())
          .as("the queue still drains")
          .isLessThan(RetryPolicy.DEFAULT_RETRY_TIMEOUT);
    }
    System.out.printf(
        "Hami2589PollingHerdTest: 8 members x 500 ms, no watch, %d seeds: requests per queue "
            + "fixed 100 ms poll %.1f, back-off %.1f (%.0f%%); drained in %.0f ms vs %.0f ms (max %d ms)%n",
        seeds,
        before / (double) seeds,
        after / (double) seeds,
        100.0 * after / before,
        drainedBefore / (double) seeds,
        drainedAfter / (double) seeds,
        maxAfterDrain);
    assertThat(after * 2)
        .as("back-off costs less than half the requests of the fixed poll")
        .isLessThan(before);
  }

  @Test
  void theBackOffBoundsDoubleFromThePollIntervalUpToTheCap() {
    RetryPolicy p = RetryPolicy.defaults();
    assertThat(
            List.of(
                p.backoffBound(0),
                p.backoffBound(1),
                p.backoffBound(2),
                p.backoffBound(3),
                p.backoffBound(4),
                p.backoffBound(40),
                p.backoffBound(Integer.MAX_VALUE)))
        .containsExactly(
            Duration.ofMillis(100),
            Duration.ofMillis(200),
            Duration.ofMillis(400),
            Duration.ofMillis(800),
            Duration.ofSeconds(1),
            Duration.ofSeconds(1),
            Duration.ofSeconds(1));
    assertThat(fixedPoll().backoffBound(7)).isEqualTo(Duration.ofMillis(100));
    Props.qt(1000)
        .forAll(
            integers().between(1, 10_000), integers().between(1, 100), integers().between(0, 200))
        .checkAssert(
            (pollMs, factor, k) -> {
              RetryPolicy q =
                  RetryPolicy.builder()
                      .pollInterval(Duration.ofMillis(pollMs))
                      .maxPollInterval(Duration.ofMillis((long) pollMs * factor))
                      .watchedPollInterval(Duration.ofMillis((long) pollMs * factor))
                      .build();
              Duration b = q.backoffBound(k);
              assertThat(b).isBetween(q.pollInterval(), q.maxPollInterval());
              assertThat(q.backoffBound(k + 1)).isBetween(b, q.maxPollInterval());
            });
  }

  /** A waiter whose holder never leaves: every sleep within its bound, none past the deadline. */
  @Test
  void noSleepExceedsItsBackOffBoundOrTheRetryDeadline() throws Exception {
    for (long seed = 1; seed <= 10; seed++) {
      VirtualTime time = new VirtualTime(Instant.parse("2026-06-14T15:00:00Z"), seed);
      InMemoryLockStore store = new InMemoryLockStore();
      store.createIfAbsent(NODE, NodeLock.DEFAULT_KEY, "2026-06-14T15:00:00Z,gangs,holder");
      // no release signal (the watch is off): every wait is a sleep on the virtual clock
      NodeLock lock =
          StoreNodeLock.create(
              new CountingStore(store, new AtomicLong()),
              LockSettings.builder().environment(java.util.Map.of()).clock(time).build());
      RetryPolicy p = RetryPolicy.builder().retryTimeout(Duration.ofMillis(4_321)).build();
      NodeLockAcquirer acquirer =
          NodeLockAcquirer.create(LockSettings.builder().retryPolicy(p).waitClock(time).build());
      time.register();
      try {
        assertThatThrownBy(
                () -> acquirer.acquire(NODE, LockOwner.of("gangs", "w"), true, List.of(lock)))
            .isInstanceOf(LockWaitTimeoutException.class);
      } finally {
        time.deregister();
      }
      List<Long> sleeps = time.sleeps();
      long total = 0;
      for (int k = 0; k < sleeps.size(); k++) {
        assertThat(sleeps.get(k))
            .as("sleep %d", k)
            .isPositive()
            .isLessThanOrEqualTo(p.backoffBound(k).toNanos());
        total += sleeps.get(k);
      }
      assertThat(total)
          .as("never past the deadline")
          .isLessThanOrEqualTo(p.retryTimeout().toNanos());
      assertThat(time.nanoTime()).isEqualTo(total);
      // 100+200+400+800 ms bounds, then 1 s: far fewer attempts than 4.3 s / 100 ms
      assertThat(sleeps.size()).isBetween(5, 43);
    }
  }

  /**
   * Wraps a store; every call is one request, and a refused compare-and-set one more (the GET the
   * Kubernetes store needs to find its witness while no watch shows the holder). No release signal:
   * the watch is off.
   */
  static final class CountingStore implements LockStore {
    private final LockStore delegate;
    private final AtomicLong requests;

    CountingStore(LockStore delegate, AtomicLong requests) {
      this.delegate = delegate;
      this.requests = requests;
    }

    @Override
    public Optional<String> read(String node, String key) throws LockBackendException {
      requests.incrementAndGet();
      return delegate.read(node, key);
    }

    @Override
    public CasResult createIfAbsent(String node, String key, String value)
        throws LockBackendException {
      requests.incrementAndGet();
      return witnessRead(delegate.createIfAbsent(node, key, value));
    }

    @Override
    public CasResult replaceIfEquals(String node, String key, String expected, String value)
        throws LockBackendException {
      requests.incrementAndGet();
      return witnessRead(delegate.replaceIfEquals(node, key, expected, value));
    }

    private CasResult witnessRead(CasResult r) {
      if (!r.isWritten()) {
        requests.incrementAndGet();
      }
      return r;
    }

    @Override
    public boolean deleteIfEquals(String node, String key, String expected)
        throws LockBackendException {
      requests.incrementAndGet();
      return delegate.deleteIfEquals(node, key, expected);
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return Optional.empty();
    }
  }
}
