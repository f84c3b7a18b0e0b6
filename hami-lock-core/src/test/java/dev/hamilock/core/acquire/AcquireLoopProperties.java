package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.integers;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockException;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.testing.generators.Props;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Multi-vendor rollback (spec §1.12) and mutual exclusion of the in-memory lock under threads. */
class AcquireLoopProperties {

  private static final String NODE = "worker-1";
  private static final LockOwner POD = LockOwner.of("default", "pod");

  /**
   * Every one of the 100 combinations (k 1–5 keys, failing draw 0–4, contention or backend error,
   * gang or not), enumerated: the domain is barely larger than the 60 random tries this property
   * used to take, and all of it costs under a second.
   */
  @Test
  void failureAtAnyPositionAmongUpToFiveKeysLeavesNoLockHeld() throws Exception {
    for (int k = 1; k <= 5; k++) {
      for (int failAt = 0; failAt <= 4; failAt++) {
        for (boolean contention : new boolean[] {false, true}) {
          for (boolean gang : new boolean[] {false, true}) {
            try {
              failureLeavesNoLockHeld(k, failAt, contention, gang);
            } catch (AssertionError e) {
              throw new AssertionError(
                  "k="
                      + k
                      + ", failAt="
                      + failAt
                      + ", contention="
                      + contention
                      + ", gang="
                      + gang
                      + ": "
                      + e.getMessage(),
                  e);
            }
          }
        }
      }
    }
  }

  private static void failureLeavesNoLockHeld(int k, int failAt, boolean contention, boolean gang)
      throws Exception {
    int position = failAt % k;
    InMemoryLockStore store = new InMemoryLockStore();
    List<NodeLock> locks = new ArrayList<>();
    for (int i = 0; i < k; i++) {
      StoreNodeLock real =
          StoreNodeLock.create(
              store, LockSettings.builder().key("vendor-" + i).environment(Map.of()).build());
      locks.add(i == position ? new Failing(real, contention) : real);
    }
    RetryPolicy policy =
        RetryPolicy.builder()
            .retryTimeout(Duration.ofMillis(gang ? 30 : 0))
            .pollInterval(Duration.ofMillis(10))
            .build();
    NodeLockException thrown = null;
    try {
      NodeLockAcquirer.create(policy).acquire(NODE, POD, gang, locks);
    } catch (NodeLockException e) {
      thrown = e;
    }
    assertThat(thrown).isNotNull();
    if (contention) {
      assertThat(thrown).isInstanceOf(LockContentionException.class);
    } else {
      assertThat(thrown).isSameAs(((Failing) locks.get(position)).error);
    }
    for (int i = 0; i < k; i++) {
      assertThat(store.read(NODE, "vendor-" + i))
          .as("vendor-%d after failure at %d of %d", i, position, k)
          .isEmpty();
    }
  }

  /**
   * Every combination (k 2–5 keys, contention at position 1..k-1, an interrupt — a cancel of {@code
   * acquireAsync} — landing right before the j-th release of the rollback), enumerated, over a
   * store that refuses an interrupted thread's requests as the Kubernetes store does: no lock of
   * the pod is left held, and the interrupt flag is set again when the call ends. Failed for every
   * combination before the rollback repeated a release refused as interrupted.
   */
  @Test
  void anInterruptLandingAtAnyReleaseOfTheRollbackLeavesNoLockHeld() throws Exception {
    for (int k = 2; k <= 5; k++) {
      for (int contendedAt = 1; contendedAt < k; contendedAt++) {
        for (int interruptAt = 0; interruptAt < contendedAt; interruptAt++) {
          try {
            interruptDuringRollbackLeavesNoLockHeld(k, contendedAt, interruptAt);
          } catch (AssertionError e) {
            throw new AssertionError(
                "k="
                    + k
                    + ", contendedAt="
                    + contendedAt
                    + ", interruptAt="
                    + interruptAt
                    + ": "
                    + e.getMessage(),
                e);
          } finally {
            Thread.interrupted(); // never leak the flag into the next combination
          }
        }
      }
    }
  }

  private static void interruptDuringRollbackLeavesNoLockHeld(
      int k, int contendedAt, int interruptAt) throws Exception {
    InMemoryLockStore memory = new InMemoryLockStore();
    dev.hamilock.core.store.LockStore refusing =
        new dev.hamilock.core.store.LockStore() {
          private void refuse() throws LockBackendException {
            if (Thread.currentThread().isInterrupted()) {
              throw new LockBackendException(
                  LockBackendException.Kind.INTERRUPTED, "interrupted", null);
            }
          }

          @Override
          public Optional<String> read(String node, String key) throws LockBackendException {
            refuse();
            return memory.read(node, key);
          }

          @Override
          public dev.hamilock.core.store.CasResult createIfAbsent(
              String node, String key, String value) throws LockBackendException {
            refuse();
            return memory.createIfAbsent(node, key, value);
          }

          @Override
          public dev.hamilock.core.store.CasResult replaceIfEquals(
              String node, String key, String expected, String value) throws LockBackendException {
            refuse();
            return memory.replaceIfEquals(node, key, expected, value);
          }

          @Override
          public boolean deleteIfEquals(String node, String key, String expected)
              throws LockBackendException {
            refuse();
            return memory.deleteIfEquals(node, key, expected);
          }
        };
    memory.createIfAbsent(
        NODE,
        "vendor-" + contendedAt,
        dev.hamilock.core.LockRecordCodec.format(
            LockRecord.of(java.time.Instant.now(), LockOwner.of("default", "holder"))));
    AtomicInteger releases = new AtomicInteger();
    List<NodeLock> locks = new ArrayList<>();
    for (int i = 0; i < k; i++) {
      StoreNodeLock real =
          StoreNodeLock.create(
              refusing, LockSettings.builder().key("vendor-" + i).environment(Map.of()).build());
      locks.add(new InterruptedBeforeRelease(real, releases, interruptAt));
    }

    NodeLockException thrown = null;
    try {
      NodeLockAcquirer.create(RetryPolicy.defaults()).acquire(NODE, POD, false, locks);
    } catch (NodeLockException e) {
      thrown = e;
    }

    assertThat(thrown).isInstanceOf(LockContentionException.class);
    assertThat(Thread.interrupted()).as("interrupt flag set again").isTrue();
    for (int i = 0; i < k; i++) {
      if (i != contendedAt) {
        assertThat(memory.read(NODE, "vendor-" + i)).as("vendor-%d", i).isEmpty();
      }
    }
  }

  /** 12 examples: 2–16 threads, 1–12 acquisitions each. */
  @Test
  void threadsNeverSeeTwoHoldersAtOnce() {
    Props.qt(12)
        .withShrinkCycles(20)
        .forAll(integers().between(2, 16), integers().between(1, 12))
        .checkAssert(
            (threads, acquisitions) ->
                Props.unchecked(() -> neverTwoHolders(threads, acquisitions)));
  }

  private static void neverTwoHolders(int threads, int acquisitionsPerThread) throws Exception {
    NodeLock lock =
        StoreNodeLock.create(
            new InMemoryLockStore(), LockSettings.builder().environment(Map.of()).build());
    MutualExclusionProbe probe = new MutualExclusionProbe(lock, () -> Thread.yield());
    assertThat(probe.run(threads, acquisitionsPerThread)).isEqualTo(1);
    assertThat(probe.entries.get()).isEqualTo(threads * acquisitionsPerThread);
    assertThat(lock.read(NODE)).isEmpty();
  }

  @Test
  void theProbeDetectsOverlapWithABrokenLock() throws Exception {
    CountDownLatch bothInside = new CountDownLatch(2);
    MutualExclusionProbe probe =
        new MutualExclusionProbe(
            new NoOpLock(),
            () -> {
              bothInside.countDown();
              try {
                bothInside.await(30, TimeUnit.SECONDS); // with a real lock this would just time out
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    assertThat(probe.run(2, 1)).isGreaterThanOrEqualTo(2);
  }

  @Test
  void theProbeWithTheSameDwellNeverOverlapsWithARealLock() throws Exception {
    NodeLock lock =
        StoreNodeLock.create(
            new InMemoryLockStore(), LockSettings.builder().environment(Map.of()).build());
    MutualExclusionProbe probe =
        new MutualExclusionProbe(
            lock,
            () -> {
              try {
                Thread.sleep(2);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    assertThat(probe.run(4, 5)).isEqualTo(1);
  }

  @Test
  void gangMemberWaitsWhileNonMemberFailsFastOnTheSameContention() throws Exception {
    InMemoryLockStore store = new InMemoryLockStore();
    StoreNodeLock lock =
        StoreNodeLock.create(store, LockSettings.builder().environment(Map.of()).build());
    LockOwner holder = LockOwner.of("default", "holder");
    lock.acquire(NODE, holder);
    RetryPolicy policy = RetryPolicy.builder().retryTimeout(Duration.ofMillis(250)).build();
    NodeLockAcquirer acquirer = NodeLockAcquirer.create(policy);
    assertThatThrownBy(() -> acquirer.acquire(NODE, POD, false, List.of(lock)))
        .isExactlyInstanceOf(LockContentionException.class);
    assertThatThrownBy(() -> acquirer.acquire(NODE, POD, true, List.of(lock)))
        .isInstanceOfSatisfying(
            dev.hamilock.core.LockWaitTimeoutException.class,
            e -> assertThat(e.attempts()).isGreaterThan(1));
    assertThat(lock.read(NODE).flatMap(LockRecord::owner)).contains(holder);
  }

  /**
   * Runs threads × acquisitions through the acquire loop, counting holders inside the critical
   * section.
   */
  static final class MutualExclusionProbe {
    private final NodeLock lock;
    private final Runnable dwell;
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger maxInside = new AtomicInteger();
    final AtomicInteger entries = new AtomicInteger();

    MutualExclusionProbe(NodeLock lock, Runnable dwell) {
      this.lock = lock;
      this.dwell = dwell;
    }

    /**
     * @return the largest number of simultaneous holders observed
     */
    int run(int threads, int acquisitions) throws Exception {
      RetryPolicy policy =
          RetryPolicy.builder()
              .pollInterval(Duration.ofMillis(5))
              .retryTimeout(Duration.ofSeconds(25))
              .build();
      NodeLockAcquirer acquirer = NodeLockAcquirer.create(policy);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          LockOwner owner = LockOwner.of("gang", "member-" + t);
          done.add(
              pool.submit(
                  () -> {
                    start.await();
                    for (int i = 0; i < acquisitions; i++) {
                      acquirer.acquire(NODE, owner, true, List.of(lock));
                      try {
                        int now = inside.incrementAndGet();
                        maxInside.accumulateAndGet(now, Math::max);
                        entries.incrementAndGet();
                        dwell.run();
                        inside.decrementAndGet();
                      } finally {
                        lock.release(NODE, owner);
                      }
                    }
                    return null;
                  }));
        }
        start.countDown();
        for (Future<?> f : done) {
          f.get(2, TimeUnit.MINUTES);
        }
        return maxInside.get();
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /**
   * Wraps a real lock; the interrupt lands right before the {@code at}-th release call (counted
   * across locks).
   */
  private static final class InterruptedBeforeRelease implements NodeLock {
    private final NodeLock delegate;
    private final AtomicInteger releases;
    private final int at;

    InterruptedBeforeRelease(NodeLock delegate, AtomicInteger releases, int at) {
      this.delegate = delegate;
      this.releases = releases;
      this.at = at;
    }

    @Override
    public String key() {
      return delegate.key();
    }

    @Override
    public Duration lockTimeout() {
      return delegate.lockTimeout();
    }

    @Override
    public AcquireOutcome acquire(String node, LockOwner owner)
        throws LockContentionException, LockBackendException {
      return delegate.acquire(node, owner);
    }

    @Override
    public boolean release(String node, LockOwner owner) throws LockBackendException {
      if (releases.getAndIncrement() == at) {
        Thread.currentThread().interrupt(); // the cancel lands now
      }
      return delegate.release(node, owner);
    }

    @Override
    public Optional<LockRecord> read(String node)
        throws dev.hamilock.core.MalformedLockException, LockBackendException {
      return delegate.read(node);
    }
  }

  /** Wraps a real lock and fails its acquire with contention or a backend error. */
  private static final class Failing implements NodeLock {
    private final NodeLock delegate;
    private final boolean contention;
    final LockBackendException error;

    Failing(NodeLock delegate, boolean contention) {
      this.delegate = delegate;
      this.contention = contention;
      this.error =
          new LockBackendException(LockBackendException.Kind.UNAVAILABLE, "injected", null);
    }

    @Override
    public String key() {
      return delegate.key();
    }

    @Override
    public Duration lockTimeout() {
      return delegate.lockTimeout();
    }

    @Override
    public AcquireOutcome acquire(String node, LockOwner owner)
        throws LockContentionException, LockBackendException {
      if (contention) {
        throw new LockContentionException(
            "injected", node, key(), Optional.empty(), Optional.empty(), Optional.empty(), null);
      }
      throw error;
    }

    @Override
    public boolean release(String node, LockOwner owner) throws LockBackendException {
      return delegate.release(node, owner);
    }

    @Override
    public Optional<LockRecord> read(String node)
        throws dev.hamilock.core.MalformedLockException, LockBackendException {
      return delegate.read(node);
    }
  }

  /** A deliberately broken lock that lets everyone in. */
  private static final class NoOpLock implements NodeLock {
    @Override
    public String key() {
      return DEFAULT_KEY;
    }

    @Override
    public Duration lockTimeout() {
      return DEFAULT_LOCK_TIMEOUT;
    }

    @Override
    public AcquireOutcome acquire(String node, LockOwner owner) {
      return AcquireOutcome.ACQUIRED;
    }

    @Override
    public boolean release(String node, LockOwner owner) {
      return true;
    }

    @Override
    public Optional<LockRecord> read(String node) {
      return Optional.empty();
    }
  }
}
