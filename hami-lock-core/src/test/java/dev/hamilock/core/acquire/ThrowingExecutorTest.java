package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.StoreNodeLock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link NodeLockAcquirer#acquireAsync} called directly (not through {@code PodBinder.bindAsync},
 * which wraps its executor before handing it on) with an executor whose {@code execute} throws an
 * unchecked exception other than {@link RejectedExecutionException} (a bug, or a pool shut down
 * that says so with {@code IllegalStateException}): the call answers with that rejection, whether
 * the throw comes at its first attempt (on the caller's thread) or at a waiting gang member's next
 * attempt (on the release feeder's thread, where an escaping exception left the future pending for
 * ever). Fails with the acquirer's own {@code CheckedExecutor.of} removed.
 */
class ThrowingExecutorTest {
  private static final String NODE = "worker-1";
  private final ExecutorService pool = Executors.newSingleThreadExecutor();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  /** Runs tasks on {@link #pool} until its {@code n}-th, which it refuses by throwing. */
  private Executor throwingAt(int n, AtomicInteger tasks) {
    return task -> {
      if (tasks.incrementAndGet() == n) {
        throw new IllegalStateException("injected executor bug at task " + n);
      }
      pool.execute(task);
    };
  }

  private static NodeLockAcquirer acquirer() {
    RetryPolicy policy =
        RetryPolicy.builder()
            .pollInterval(Duration.ofMinutes(1))
            .maxPollInterval(Duration.ofMinutes(1))
            .watchedPollInterval(Duration.ofMinutes(1))
            .retryTimeout(Duration.ofMinutes(5))
            .extenderHttpTimeout(Duration.ofMinutes(6))
            .build();
    return NodeLockAcquirer.create(LockSettings.builder().retryPolicy(policy).build());
  }

  private static StoreNodeLock lock() {
    return StoreNodeLock.create(
        new InMemoryLockStore(),
        LockSettings.builder().key(NodeLock.DEFAULT_KEY).environment(Map.of()).build());
  }

  @Test
  void aThrowAtTheFirstAttemptIsARejectionNotAnExceptionOutOfTheCall() throws Exception {
    AtomicInteger tasks = new AtomicInteger();
    CompletableFuture<LockAcquisition> f =
        acquirer()
            .acquireAsync(
                NODE, LockOwner.of("default", "p1"), true, List.of(lock()), throwingAt(1, tasks));

    assertThat(f).failsWithin(Duration.ofSeconds(5));
    assertThat(causeOf(f)).isInstanceOf(RejectedExecutionException.class);
    assertThat(causeOf(f).getCause()).hasMessageContaining("injected executor bug at task 1");
  }

  @Test
  void aThrowAtAWaitingMembersWokenAttemptAnswersTheCall() throws Exception {
    StoreNodeLock lock = lock();
    LockOwner holder = LockOwner.of("default", "holder");
    lock.acquire(NODE, holder);
    AtomicInteger tasks = new AtomicInteger();
    CompletableFuture<LockAcquisition> f =
        acquirer()
            .acquireAsync(
                NODE, LockOwner.of("default", "member"), true, List.of(lock), throwingAt(2, tasks));
    FairReleaseQueue queue = (FairReleaseQueue) lock.store().releaseSignal().orElseThrow();
    long cap = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (queue.waiting(NODE) < 1 && System.nanoTime() < cap) {
      Thread.sleep(5); // the first attempt meets the holder, then the member joins the queue
    }
    assertThat(queue.waiting(NODE)).as("the member waiting for the holder's release").isEqualTo(1);
    assertThat(f).isNotDone();

    lock.release(NODE, holder); // the wake-up hands the member's next attempt to the executor

    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("the woken attempt's executor threw and the call never answered", e);
    } catch (Exception expected) {
      // checked below
    }
    assertThat(tasks.get()).as("the woken attempt reached the executor").isEqualTo(2);
    assertThat(causeOf(f)).isInstanceOf(RejectedExecutionException.class);
    assertThat(lock.readValue(NODE)).as("nothing held after the rejection").isEmpty();
  }

  private static Throwable causeOf(CompletableFuture<?> f) {
    try {
      f.join();
      throw new AssertionError("completed normally: " + f);
    } catch (CompletionException e) {
      return e.getCause();
    }
  }
}
