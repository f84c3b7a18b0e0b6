package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockBackendException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockRecordCodec;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.CasResult;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.LockStore;
import dev.hamilock.core.store.StoreNodeLock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the acquire loop leaves behind when a lock write has an unknown outcome or the thread is
 * interrupted / the future cancelled mid-attempt. The store here honours the {@link LockStore}
 * contract for interruption exactly as the Kubernetes store does: an interrupted thread's request
 * is not sent, {@link LockBackendException.Kind#INTERRUPTED} is thrown and the flag is kept.
 */
class AcquireCleanupTest {

  private static final String NODE = "worker-1";
  private static final LockOwner POD = LockOwner.of("default", "gang-pod-1");

  private final ExecutorService executor = Executors.newSingleThreadExecutor();
  private final InMemoryLockStore memory = new InMemoryLockStore();
  private final AtomicReference<Hook> createHook = new AtomicReference<>();
  private final AtomicReference<Runnable> beforeDelete = new AtomicReference<>();
  private final LockStore store = new InterruptibleStore();

  @AfterEach
  void stop() {
    executor.shutdownNow();
  }

  private StoreNodeLock lock(String key) {
    return StoreNodeLock.create(
        store, LockSettings.builder().key(key).environment(Map.of()).build());
  }

  @Test
  void aLaterLockWrittenWithAnUnknownOutcomeIsRolledBackWithTheEarlierOnes() throws Exception {
    StoreNodeLock a = lock("AMD");
    StoreNodeLock b = lock("NVIDIA");
    createHook.set(
        (node, key, value) -> {
          if (key.equals("NVIDIA")) {
            memory.createIfAbsent(
                node, key, value); // applied, but the answer (and the re-read) lost
            throw new LockBackendException(
                LockBackendException.Kind.UNAVAILABLE, "timeout, re-read failed", null);
          }
          return memory.createIfAbsent(node, key, value);
        });

    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(RetryPolicy.defaults())
                    .acquire(NODE, POD, true, List.of(a, b)))
        .isInstanceOf(LockBackendException.class)
        .hasMessageContaining("re-read failed");

    createHook.set(null);
    assertThat(a.read(NODE)).as("AMD").isEmpty();
    assertThat(b.read(NODE)).as("NVIDIA, possibly written by the failed attempt").isEmpty();
  }

  @Test
  void anInterruptDuringTheSecondLockStillRollsBackTheFirst() throws Exception {
    StoreNodeLock a = lock("AMD");
    StoreNodeLock b = lock("NVIDIA");
    createHook.set(
        (node, key, value) -> {
          if (key.equals("NVIDIA")) {
            Thread.currentThread().interrupt(); // the scheduler shuts down during this request
            throw new LockBackendException(
                LockBackendException.Kind.INTERRUPTED, "interrupted", null);
          }
          return memory.createIfAbsent(node, key, value);
        });
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Boolean> interruptKept = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              try {
                NodeLockAcquirer.create(RetryPolicy.defaults())
                    .acquire(NODE, POD, true, List.of(a, b));
              } catch (Throwable e) {
                thrown.set(e);
              }
              interruptKept.set(Thread.currentThread().isInterrupted());
            });
    t.start();
    t.join(TimeUnit.MINUTES.toMillis(1));

    assertThat(thrown.get()).isInstanceOf(LockBackendException.class);
    assertThat(interruptKept.get()).as("interrupt flag restored").isTrue();
    createHook.set(null);
    assertThat(a.read(NODE)).as("AMD taken before the interrupt").isEmpty();
  }

  @Test
  void cancellingWhileTheLastLockIsBeingWrittenReleasesEveryLock() throws Exception {
    StoreNodeLock a = lock("AMD");
    StoreNodeLock b = lock("NVIDIA");
    CountDownLatch writing = new CountDownLatch(1);
    CountDownLatch cancelled = new CountDownLatch(1);
    createHook.set(
        (node, key, value) -> {
          CasResult written = memory.createIfAbsent(node, key, value);
          if (key.equals("NVIDIA")) {
            writing.countDown(); // the PATCH is on the wire: it will be applied whatever happens
            awaitUninterruptibly(cancelled);
          }
          return written;
        });
    CompletableFuture<LockAcquisition> f =
        NodeLockAcquirer.create(RetryPolicy.defaults())
            .acquireAsync(NODE, POD, true, List.of(a, b), executor);
    assertThat(writing.await(1, TimeUnit.MINUTES)).isTrue();

    assertThat(f.cancel(true)).isTrue();
    cancelled.countDown();
    executor.shutdown();
    assertThat(executor.awaitTermination(1, TimeUnit.MINUTES)).isTrue();

    assertThatThrownBy(f::join).isInstanceOf(CancellationException.class);
    createHook.set(null);
    assertThat(a.read(NODE).flatMap(LockRecord::owner)).as("AMD").isEmpty();
    assertThat(b.read(NODE).flatMap(LockRecord::owner)).as("NVIDIA").isEmpty();
  }

  /**
   * A cancel that lands while the worker is rolling back a failed attempt (its rollback cleared the
   * interrupt flag once, at its start) must not make the rollback's release requests fail as
   * interrupted and leave the earlier lock held for a whole lock timeout (5 min) on a node. Found
   * by review (breaker2); failed before the rollback retried a release refused as interrupted.
   */
  @Test
  void aCancelLandingDuringTheRollbackStillReleasesTheEarlierLock() throws Exception {
    StoreNodeLock a = lock("AMD");
    StoreNodeLock b = lock("NVIDIA");
    memory.createIfAbsent(
        NODE,
        "NVIDIA",
        LockRecordCodec.format(
            LockRecord.of(
                Instant.now(),
                LockOwner.of(
                    "default", "holder")))); // contended: one attempt, then the rollback of AMD
    CountDownLatch rollingBack = new CountDownLatch(1);
    CountDownLatch cancelled = new CountDownLatch(1);
    beforeDelete.set(
        () -> {
          if (rollingBack.getCount() > 0) {
            rollingBack.countDown(); // the rollback is about to send its DELETE
            awaitUninterruptibly(cancelled); // the cancel's interrupt lands now (flag kept)
          }
        });
    CompletableFuture<LockAcquisition> f =
        NodeLockAcquirer.create(RetryPolicy.defaults())
            .acquireAsync(NODE, POD, false, List.of(a, b), executor);
    assertThat(rollingBack.await(1, TimeUnit.MINUTES)).isTrue();

    assertThat(f.cancel(true)).isTrue();
    cancelled.countDown();
    executor.shutdown();
    assertThat(executor.awaitTermination(1, TimeUnit.MINUTES)).isTrue();

    beforeDelete.set(null);
    assertThat(a.read(NODE).flatMap(LockRecord::owner)).as("AMD, taken and rolled back").isEmpty();
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  @FunctionalInterface
  interface Hook {
    CasResult create(String node, String key, String value) throws LockBackendException;
  }

  /** In-memory values; an interrupted caller's request is refused as the Kubernetes store does. */
  private final class InterruptibleStore implements LockStore {
    private void refuseIfInterrupted(String what) throws LockBackendException {
      if (Thread.currentThread().isInterrupted()) {
        throw new LockBackendException(
            LockBackendException.Kind.INTERRUPTED, what + " was interrupted", null);
      }
    }

    @Override
    public Optional<String> read(String node, String key) throws LockBackendException {
      refuseIfInterrupted("read");
      return memory.read(node, key);
    }

    @Override
    public CasResult createIfAbsent(String node, String key, String value)
        throws LockBackendException {
      refuseIfInterrupted("create");
      Hook h = createHook.get();
      return h == null ? memory.createIfAbsent(node, key, value) : h.create(node, key, value);
    }

    @Override
    public CasResult replaceIfEquals(String node, String key, String expected, String value)
        throws LockBackendException {
      refuseIfInterrupted("replace");
      return memory.replaceIfEquals(node, key, expected, value);
    }

    @Override
    public boolean deleteIfEquals(String node, String key, String expected)
        throws LockBackendException {
      Runnable before = beforeDelete.get();
      if (before != null) {
        before.run();
      }
      refuseIfInterrupted("delete");
      return memory.deleteIfEquals(node, key, expected);
    }
  }
}
