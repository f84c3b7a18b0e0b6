package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockReleaseSignal;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Spec §1.11–1.12; vectors V27–V31 (HAMi pkg/scheduler/scheduler_test.go). */
class NodeLockAcquirerTest {

  private static final String NODE = "worker-1";
  private static final LockOwner POD = LockOwner.of("default", "gang-pod-1");
  private static final LockOwner HOLDER = LockOwner.of("default", "gang-pod-0");

  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  private final ExecutorService executor = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    executor.shutdownNow();
  }

  private static RetryPolicy retry(Duration timeout) {
    return RetryPolicy.builder().retryTimeout(timeout).build();
  }

  private static StoreNodeLock memoryLock(InMemoryLockStore store, String key) {
    return StoreNodeLock.create(
        store, LockSettings.builder().key(key).environment(Map.of()).build());
  }

  @Test
  void v27NonMemberFailsFastWithOneCall() {
    ScriptedLock backend =
        new ScriptedLock(
            "NVIDIA",
            log,
            call -> {
              throw ScriptedLock.contention("NVIDIA");
            },
            null);
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(RetryPolicy.defaults())
                    .acquire(NODE, POD, false, List.of(backend)))
        .isExactlyInstanceOf(LockContentionException.class)
        .hasMessageContaining("node lock contention");
    assertThat(backend.acquireCalls).hasValue(1);
  }

  @Test
  void zeroRetryTimeoutFailsFastEvenForGangMembers() {
    ScriptedLock backend =
        new ScriptedLock(
            "NVIDIA",
            log,
            call -> {
              throw ScriptedLock.contention("NVIDIA");
            },
            null);
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(RetryPolicy.failFast())
                    .acquire(NODE, POD, true, List.of(backend)))
        .isExactlyInstanceOf(LockContentionException.class);
    assertThat(backend.acquireCalls).hasValue(1);
  }

  @Test
  void v28MemberRetriesAContendedLockAndGetsThrough() throws Exception {
    ScriptedLock backend =
        new ScriptedLock(
            "NVIDIA",
            log,
            call -> {
              if (call == 1) {
                throw ScriptedLock.contention("NVIDIA");
              }
            },
            null);
    LockAcquisition a =
        NodeLockAcquirer.create(retry(Duration.ofSeconds(2)))
            .acquire(NODE, POD, true, List.of(backend));
    assertThat(backend.acquireCalls.get()).isGreaterThanOrEqualTo(2);
    assertThat(a.attempts()).isEqualTo(2);
    assertThat(a.keys()).containsExactly("NVIDIA");
    assertThat(a.node()).isEqualTo(NODE);
    assertThat(a.owner()).isEqualTo(POD);
  }

  @Test
  void v29MemberAlwaysContendedTimesOutWithHamiMessageAfterReleasingPartialLocks() {
    ScriptedLock first = ScriptedLock.ok("AMD", log);
    ScriptedLock second =
        new ScriptedLock(
            "NVIDIA",
            log,
            call -> {
              throw ScriptedLock.contention("NVIDIA");
            },
            null);
    Duration timeout = Duration.ofMillis(300);
    // HAMi's fixed 100 ms poll, on a stepped clock: the attempt count is a logical fact (it
    // was a wall-clock bound once, and flaked: random jitter and a loaded machine)
    RetryPolicy policy =
        RetryPolicy.builder()
            .retryTimeout(timeout)
            .maxPollInterval(RetryPolicy.DEFAULT_POLL_INTERVAL)
            .build();
    SteppedClock clock = SteppedClock.maxJitter();
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(
                        LockSettings.builder().retryPolicy(policy).waitClock(clock).build())
                    .acquire(NODE, POD, true, List.of(second, first)))
        .isInstanceOfSatisfying(
            LockWaitTimeoutException.class,
            e -> {
              assertThat(e.getMessage())
                  .isEqualTo(
                      "timed out after 300ms waiting for node worker-1 to be unlocked: node lock contention");
              // one attempt per poll interval plus the first: t = 0, 100, 200, 300 ms
              assertThat(e.attempts()).isEqualTo(4).isEqualTo(second.acquireCalls.get());
              assertThat(e.waited()).isEqualTo(timeout);
              assertThat(e.retryTimeout()).isEqualTo(timeout);
              assertThat(e.key()).isEqualTo("NVIDIA");
              assertThat(e.holderValue()).contains("2026-08-01T06:00:00Z,ns,x");
              assertThat(e.getCause()).isInstanceOf(LockContentionException.class);
            });
    assertThat(clock.sleeps()).containsExactly(100_000_000L, 100_000_000L, 100_000_000L);
    assertThat(first.releaseCalls.get()).isEqualTo(4).isEqualTo(first.acquireCalls.get());
    assertThat(log)
        .containsExactly(
            "lock:AMD",
            "lock:NVIDIA",
            "release:AMD",
            "lock:AMD",
            "lock:NVIDIA",
            "release:AMD",
            "lock:AMD",
            "lock:NVIDIA",
            "release:AMD",
            "lock:AMD",
            "lock:NVIDIA",
            "release:AMD");
  }

  /**
   * The same on the real clock with the default jittered back-off: only facts that timing cannot
   * change.
   */
  @Test
  void v29OnTheRealClockAttemptsOnlyAfterWaitsAndReportsTheTimeout() {
    ScriptedLock second =
        new ScriptedLock(
            "NVIDIA",
            log,
            call -> {
              throw ScriptedLock.contention("NVIDIA");
            },
            null);
    Duration timeout = Duration.ofMillis(300);
    RetryPolicy policy = RetryPolicy.builder().retryTimeout(timeout).build();
    assertThatThrownBy(
            () -> NodeLockAcquirer.create(policy).acquire(NODE, POD, true, List.of(second)))
        .isInstanceOfSatisfying(
            LockWaitTimeoutException.class,
            e -> {
              assertThat(e.attempts())
                  .isGreaterThanOrEqualTo(2)
                  .isEqualTo(second.acquireCalls.get());
              assertThat(e.waited()).isGreaterThanOrEqualTo(timeout);
              assertThat(e.retryTimeout()).isEqualTo(timeout);
            });
  }

  @Test
  void v30NonContentionErrorIsReturnedAtOnceUnwrapped() {
    LockBackendException apiError =
        new LockBackendException(LockBackendException.Kind.UNAVAILABLE, "apiserver 500", null);
    ScriptedLock backend =
        new ScriptedLock(
            "NVIDIA",
            log,
            call -> {
              throw apiError;
            },
            null);
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(retry(Duration.ofSeconds(2)))
                    .acquire(NODE, POD, true, List.of(backend)))
        .isSameAs(apiError)
        .hasMessageContaining("apiserver 500");
    assertThat(backend.acquireCalls).hasValue(1);
  }

  @Test
  void v31ThirdBackendFailsRollsBackInReverseOrder() {
    LockBackendException third =
        new LockBackendException(LockBackendException.Kind.REJECTED, "backend3", null);
    List<NodeLock> locks =
        List.of(
            ScriptedLock.ok("backend1", log),
            ScriptedLock.ok("backend2", log),
            new ScriptedLock(
                "backend3",
                log,
                call -> {
                  throw third;
                },
                null));
    assertThatThrownBy(
            () -> NodeLockAcquirer.create(RetryPolicy.defaults()).acquire(NODE, POD, true, locks))
        .isSameAs(third);
    assertThat(log)
        .containsExactly(
            "lock:backend1",
            "lock:backend2",
            "lock:backend3",
            "release:backend2",
            "release:backend1");
  }

  @Test
  void v31ReleaseErrorDuringRollbackKeepsTheOriginalError() {
    LockBackendException third =
        new LockBackendException(LockBackendException.Kind.REJECTED, "backend3", null);
    LockBackendException releaseFailure =
        new LockBackendException(LockBackendException.Kind.UNAVAILABLE, "release backend2", null);
    List<NodeLock> locks =
        List.of(
            ScriptedLock.ok("backend1", log),
            new ScriptedLock("backend2", log, call -> {}, releaseFailure),
            new ScriptedLock(
                "backend3",
                log,
                call -> {
                  throw third;
                },
                null));
    try (LogCapture logs = LogCapture.start()) {
      assertThatThrownBy(
              () ->
                  NodeLockAcquirer.create(RetryPolicy.defaults()).acquire(NODE, POD, false, locks))
          .isSameAs(third)
          .satisfies(e -> assertThat(e.getSuppressed()).containsExactly(releaseFailure));
      assertThat(
              logs.expect(
                  "WARN dev\\.hamilock\\.core\\.acquire\\.NodeLockAcquirer - node worker-1: rollback"
                      + " release of lock backend2 for default/gang-pod-1 failed \\(original error:"
                      + " backend3\\): release backend2$"))
          .as("the failed rollback release is logged once, with the original error")
          .hasSize(1);
    }
    assertThat(log)
        .containsExactly(
            "lock:backend1",
            "lock:backend2",
            "lock:backend3",
            "release:backend2",
            "release:backend1");
  }

  @Test
  void v31FirstBackendFailingCallsNothingElse() {
    LockBackendException first =
        new LockBackendException(LockBackendException.Kind.REJECTED, "backend1", null);
    List<NodeLock> locks =
        List.of(
            new ScriptedLock(
                "backend1",
                log,
                call -> {
                  throw first;
                },
                null),
            ScriptedLock.ok("backend2", log),
            ScriptedLock.ok("backend3", log));
    assertThatThrownBy(
            () -> NodeLockAcquirer.create(RetryPolicy.defaults()).acquire(NODE, POD, false, locks))
        .isSameAs(first);
    assertThat(log).containsExactly("lock:backend1");
  }

  @Test
  void keysAreTakenInByteOrderAndDuplicatesOnce() throws Exception {
    List<NodeLock> locks =
        List.of(
            ScriptedLock.ok("kunlun", log),
            ScriptedLock.ok("NVIDIA", log),
            ScriptedLock.ok("Ascend910B", log),
            ScriptedLock.ok("AMD", log),
            ScriptedLock.ok("NVIDIA", log));
    LockAcquisition a =
        NodeLockAcquirer.create(RetryPolicy.defaults()).acquire(NODE, POD, false, locks);
    assertThat(log).containsExactly("lock:AMD", "lock:Ascend910B", "lock:NVIDIA", "lock:kunlun");
    assertThat(a.keys()).containsExactly("AMD", "Ascend910B", "NVIDIA", "kunlun");
    assertThat(a.attempts()).isEqualTo(1);
  }

  @Test
  void releaseAllReleasesInReverseOrderAndReportsTheFirstFailure() {
    LockBackendException failure =
        new LockBackendException(LockBackendException.Kind.UNAVAILABLE, "b", null);
    List<NodeLock> locks =
        List.of(
            ScriptedLock.ok("a", log),
            new ScriptedLock("b", log, c -> {}, failure),
            ScriptedLock.ok("c", log));
    assertThatThrownBy(
            () -> NodeLockAcquirer.create(RetryPolicy.defaults()).releaseAll(NODE, POD, locks))
        .isSameAs(failure);
    assertThat(log).containsExactly("release:c", "release:b", "release:a");
  }

  @Test
  void releaseSignalWakesTheWaiterBeforeTheNextPoll() throws Exception {
    InMemoryLockStore store = new InMemoryLockStore();
    StoreNodeLock lock = memoryLock(store, NodeLock.DEFAULT_KEY);
    lock.acquire(NODE, HOLDER);
    // a poll interval far longer than the hold: only the signal can explain an early acquire
    RetryPolicy policy =
        RetryPolicy.builder()
            .pollInterval(Duration.ofSeconds(10))
            .retryTimeout(Duration.ofSeconds(25))
            .build();
    AtomicLong released = new AtomicLong();
    CompletableFuture<Void> holder =
        CompletableFuture.runAsync(
            () -> {
              try {
                Thread.sleep(20);
                released.set(System.nanoTime());
                lock.release(NODE, HOLDER);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            executor);
    LockAcquisition a = NodeLockAcquirer.create(policy).acquire(NODE, POD, true, List.of(lock));
    long acquired = System.nanoTime();
    holder.get(1, TimeUnit.MINUTES);
    assertThat(a.attempts()).isEqualTo(2);
    assertThat(acquired).isGreaterThan(released.get());
    assertThat(Duration.ofNanos(acquired - released.get())).isLessThan(policy.pollInterval());
    assertThat(lock.read(NODE).flatMap(LockRecord::owner)).contains(POD);
  }

  @Test
  void withoutASignalTheWaiterPollsAndAcquiresAfterTheRelease() throws Exception {
    InMemoryLockStore store = new InMemoryLockStore();
    StoreNodeLock lock = memoryLock(store, NodeLock.DEFAULT_KEY);
    NodeLock pollOnly = new NoSignal(lock);
    lock.acquire(NODE, HOLDER);
    AtomicLong released = new AtomicLong();
    CompletableFuture<Void> holder =
        CompletableFuture.runAsync(
            () -> {
              try {
                Thread.sleep(20);
                released.set(System.nanoTime());
                lock.release(NODE, HOLDER);
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            executor);
    LockAcquisition a =
        NodeLockAcquirer.create(retry(Duration.ofSeconds(20)))
            .acquire(NODE, POD, true, List.of(pollOnly));
    long acquired = System.nanoTime();
    holder.get(1, TimeUnit.MINUTES);
    assertThat(acquired).isGreaterThan(released.get());
    assertThat(a.attempts()).isGreaterThanOrEqualTo(2);
    assertThat(a.waited()).isPositive();
  }

  @Test
  void interruptEndsTheWaitAndLeavesNothingHeld() throws Exception {
    InMemoryLockStore store = new InMemoryLockStore();
    StoreNodeLock amd = memoryLock(store, "AMD");
    StoreNodeLock nvidia = memoryLock(store, "NVIDIA");
    nvidia.acquire(NODE, HOLDER);
    RetryPolicy policy =
        RetryPolicy.builder()
            .pollInterval(Duration.ofSeconds(10))
            .retryTimeout(Duration.ofSeconds(25))
            .build();
    CountDownLatch contended = new CountDownLatch(1);
    NodeLockAcquirer acquirer = NodeLockAcquirer.create(policy);
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                acquirer.acquire(NODE, POD, true, List.of(amd, new Contended(nvidia, contended)));
              } catch (Throwable t) {
                outcome.set(t);
              }
            });
    waiter.start();
    assertThat(contended.await(1, TimeUnit.MINUTES))
        .as("waiter reached contention: %s", outcome.get())
        .isTrue();
    waiter.interrupt();
    waiter.join(TimeUnit.MINUTES.toMillis(1));
    assertThat(waiter.isAlive()).isFalse();
    assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
    assertThat(amd.read(NODE)).isEmpty();
    assertThat(nvidia.read(NODE).flatMap(LockRecord::owner)).contains(HOLDER);
  }

  @Test
  void asyncAcquisitionCompletes() throws Exception {
    InMemoryLockStore store = new InMemoryLockStore();
    StoreNodeLock lock = memoryLock(store, NodeLock.DEFAULT_KEY);
    LockAcquisition a =
        NodeLockAcquirer.create(RetryPolicy.defaults())
            .acquireAsync(NODE, POD, true, List.of(lock), executor)
            .get(1, TimeUnit.MINUTES);
    assertThat(a.keys()).containsExactly(NodeLock.DEFAULT_KEY);
    assertThat(lock.read(NODE).flatMap(LockRecord::owner)).contains(POD);
  }

  @Test
  void asyncFailureCarriesTheSameException() {
    LockBackendException apiError =
        new LockBackendException(LockBackendException.Kind.UNAVAILABLE, "500", null);
    ScriptedLock backend =
        new ScriptedLock(
            "NVIDIA",
            log,
            call -> {
              throw apiError;
            },
            null);
    CompletableFuture<LockAcquisition> f =
        NodeLockAcquirer.create(RetryPolicy.defaults())
            .acquireAsync(NODE, POD, true, List.of(backend), executor);
    assertThatThrownBy(() -> f.get(1, TimeUnit.MINUTES)).hasCause(apiError);
  }

  @Test
  void cancellingTheFutureStopsTheWaitingWorker() throws Exception {
    InMemoryLockStore store = new InMemoryLockStore();
    StoreNodeLock lock = memoryLock(store, NodeLock.DEFAULT_KEY);
    lock.acquire(NODE, HOLDER);
    RetryPolicy policy =
        RetryPolicy.builder()
            .pollInterval(Duration.ofSeconds(10))
            .retryTimeout(Duration.ofSeconds(25))
            .build();
    CountDownLatch contended = new CountDownLatch(1);
    CountDownLatch ended = new CountDownLatch(1);
    AtomicInteger endedAcquired = new AtomicInteger(-1);
    NodeLockAcquirer acquirer =
        NodeLockAcquirer.create(
            LockSettings.builder()
                .retryPolicy(policy)
                .listener(
                    new NodeLockListener() {
                      @Override
                      public void waited(
                          String node,
                          LockOwner owner,
                          Duration waited,
                          int attempts,
                          boolean acquired) {
                        endedAcquired.set(acquired ? 1 : 0);
                        ended.countDown();
                      }
                    })
                .build());
    CompletableFuture<LockAcquisition> f =
        acquirer.acquireAsync(NODE, POD, true, List.of(new Contended(lock, contended)), executor);
    assertThat(contended.await(1, TimeUnit.MINUTES))
        .as("waiter reached contention: %s", f)
        .isTrue();
    assertThat(f.cancel(true)).isTrue();
    assertThat(ended.await(1, TimeUnit.MINUTES))
        .as("worker ended long before the 10 s poll")
        .isTrue();
    assertThat(endedAcquired).hasValue(0);
    assertThatThrownBy(f::join).isInstanceOf(CancellationException.class);
    assertThat(lock.read(NODE).flatMap(LockRecord::owner)).contains(HOLDER);
  }

  @Test
  void listenerHearsOneWaitedEventPerCall() throws Exception {
    List<String> events = new ArrayList<>();
    NodeLockAcquirer acquirer =
        NodeLockAcquirer.create(
            LockSettings.builder()
                .retryPolicy(RetryPolicy.defaults())
                .listener(
                    new NodeLockListener() {
                      @Override
                      public void waited(
                          String node,
                          LockOwner owner,
                          Duration waited,
                          int attempts,
                          boolean acquired) {
                        events.add(node + " " + owner.name() + " " + attempts + " " + acquired);
                      }
                    })
                .build());
    acquirer.acquire(NODE, POD, false, List.of(ScriptedLock.ok("a", log)));
    assertThat(events).containsExactly("worker-1 gang-pod-1 1 true");
  }

  @Test
  void badInputIsRejectedNamingTheArgument() {
    NodeLockAcquirer acquirer = NodeLockAcquirer.create(RetryPolicy.defaults());
    List<NodeLock> locks = List.of(ScriptedLock.ok("a", log));
    assertThatThrownBy(() -> acquirer.acquire(null, POD, true, locks))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("node");
    assertThatThrownBy(() -> acquirer.acquire(" ", POD, true, locks))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("node");
    assertThatThrownBy(() -> acquirer.acquire(NODE, null, true, locks))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("owner");
    assertThatThrownBy(() -> acquirer.acquire(NODE, POD, true, List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("locks");
    assertThatThrownBy(() -> acquirer.acquireAsync(NODE, POD, true, locks, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("executor");
    assertThatThrownBy(() -> NodeLockAcquirer.create((RetryPolicy) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("policy");
    assertThatThrownBy(() -> NodeLockAcquirer.create((LockSettings) null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("settings");
    assertThat(log).isEmpty();
  }

  /** Hides the delegate's release signal (a poll-only backend). */
  private static final class NoSignal extends Delegating {
    NoSignal(NodeLock delegate) {
      super(delegate);
    }

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return Optional.empty();
    }
  }

  /** Counts down a latch on the first contention, so a test knows the waiter is waiting. */
  private static final class Contended extends Delegating {
    private final CountDownLatch latch;

    Contended(NodeLock delegate, CountDownLatch latch) {
      super(delegate);
      this.latch = latch;
    }

    @Override
    public dev.hamilock.core.AcquireOutcome acquire(String node, LockOwner owner)
        throws LockContentionException, LockBackendException {
      try {
        return super.acquire(node, owner);
      } catch (LockContentionException e) {
        latch.countDown();
        throw e;
      }
    }
  }

  private static class Delegating implements NodeLock {
    private final NodeLock delegate;

    Delegating(NodeLock delegate) {
      this.delegate = delegate;
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
    public dev.hamilock.core.AcquireOutcome acquire(String node, LockOwner owner)
        throws LockContentionException, LockBackendException {
      return delegate.acquire(node, owner);
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

    @Override
    public Optional<LockReleaseSignal> releaseSignal() {
      return delegate.releaseSignal();
    }
  }

  private static final class AtomicLong extends java.util.concurrent.atomic.AtomicLong {
    private static final long serialVersionUID = 1L;
  }
}
