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
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 25 item 3: a gang member waiting for a node lock holds no thread. 64 members wait on one
 * held lock with an attempt executor of 2 threads: all 64 are waiting at once (a pending wake-up
 * each) while both threads are idle, and when the holder releases they take the lock in turn, in
 * the order they queued. With the blocking loop moved onto the executor (the code before), 2
 * members hold the 2 threads and the other 62 never get to wait: the queue never shows 64 waiting.
 */
class WaitingAcquisitionHoldsNoThreadTest {
  private static final String NODE = "worker-1";
  private static final int MEMBERS = 64;

  private final ThreadPoolExecutor attempts =
      new ThreadPoolExecutor(2, 2, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());

  @AfterEach
  void stop() {
    attempts.shutdownNow();
  }

  @Test
  void sixtyFourWaitingMembersHoldNoneOfTheTwoAttemptThreads() throws Exception {
    InMemoryLockStore store = new InMemoryLockStore();
    StoreNodeLock lock =
        StoreNodeLock.create(
            store, LockSettings.builder().key(NodeLock.DEFAULT_KEY).environment(Map.of()).build());
    FairReleaseQueue queue = (FairReleaseQueue) store.releaseSignal().orElseThrow();
    LockOwner holder = LockOwner.of("default", "holder");
    lock.acquire(NODE, holder);
    // one fixed 1-minute poll: after its first attempt each member waits, unwoken, for a minute
    RetryPolicy policy =
        RetryPolicy.builder()
            .pollInterval(Duration.ofMinutes(1))
            .maxPollInterval(Duration.ofMinutes(1))
            .watchedPollInterval(Duration.ofMinutes(1))
            .retryTimeout(Duration.ofMinutes(5))
            .extenderHttpTimeout(Duration.ofMinutes(6))
            .build();
    NodeLockAcquirer acquirer =
        NodeLockAcquirer.create(LockSettings.builder().retryPolicy(policy).build());
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<LockAcquisition>> members = new ArrayList<>();
    for (int i = 0; i < MEMBERS; i++) {
      LockOwner member = LockOwner.of("default", "member-" + i);
      members.add(
          acquirer
              .acquireAsync(NODE, member, true, List.of(lock), attempts)
              .whenComplete(
                  (a, e) -> {
                    order.add(member.name());
                    try {
                      lock.release(NODE, member); // the device plugin's release: next one's turn
                    } catch (Exception x) {
                      throw new IllegalStateException(x);
                    }
                  }));
    }
    long cap = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (queue.waiting(NODE) < MEMBERS && System.nanoTime() < cap) {
      Thread.sleep(5);
    }
    assertThat(queue.waiting(NODE))
        .as("members waiting at once with 2 attempt threads")
        .isEqualTo(MEMBERS);
    // the thread that queued the last member returns to the pool just after it joined the queue
    while (attempts.getActiveCount() > 0 && System.nanoTime() < cap) {
      Thread.sleep(5);
    }
    assertThat(attempts.getActiveCount()).as("attempt threads busy while all wait").isZero();
    assertThat(members).noneMatch(CompletableFuture::isDone);

    lock.release(NODE, holder);
    CompletableFuture.allOf(members.toArray(CompletableFuture[]::new)).get(1, TimeUnit.MINUTES);
    List<String> queued = new ArrayList<>();
    for (int i = 0; i < MEMBERS; i++) {
      queued.add("member-" + i);
    }
    assertThat(order).as("one wake-up per release, oldest first").isEqualTo(queued);
    assertThat(members).allSatisfy(f -> assertThat(f.join().attempts()).isEqualTo(2));
  }
}
