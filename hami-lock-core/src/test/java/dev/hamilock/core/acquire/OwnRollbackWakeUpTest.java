package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.LockWaitTimeoutException;
import dev.hamilock.core.NodeLock;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.StoreNodeLock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Two lock keys in one in-memory store share one wake-up queue. A gang member that takes key A,
 * meets contention on key B and rolls A back must not be woken by its own rollback's release: it
 * would retry at once, take A, roll it back, wake itself again — a busy loop of attempts until the
 * deadline. The acquirer drains that wake-up ({@code Waiter.drain()}) after its rollback, so its
 * attempts follow the poll: with HAMi's fixed 100 ms poll (no jitter) a 700 ms budget allows at
 * most 8 attempts, each wait lasting its full 100 ms unless a release (there is none) cuts it
 * short. Without the drain the count runs into the thousands.
 */
class OwnRollbackWakeUpTest {

  @Test
  void aRollbacksOwnReleaseDoesNotWakeTheWaiterThatMadeIt() throws Exception {
    InMemoryLockStore store = new InMemoryLockStore();
    NodeLock a = lock(store, "a.example/lock");
    NodeLock b = lock(store, "b.example/lock");
    String node = "worker-1";
    LockOwner holder = LockOwner.of("default", "holder");
    b.acquire(node, holder);
    RetryPolicy p =
        RetryPolicy.builder()
            .retryTimeout(Duration.ofMillis(700))
            .maxPollInterval(Duration.ofMillis(100))
            .build();
    assertThatThrownBy(
            () ->
                NodeLockAcquirer.create(p)
                    .acquire(node, LockOwner.of("default", "member"), true, List.of(a, b)))
        .isInstanceOfSatisfying(
            LockWaitTimeoutException.class, e -> assertThat(e.attempts()).isBetween(2, 8));
    assertThat(a.read(node)).isEmpty();
    assertThat(b.read(node)).hasValueSatisfying(r -> assertThat(r.owner()).contains(holder));
  }

  private static NodeLock lock(InMemoryLockStore store, String key) {
    return StoreNodeLock.create(
        store,
        LockSettings.builder()
            .key(key)
            .environment(Map.of())
            .ownerLiveness(OwnerLiveness.assumeAlive())
            .build());
  }
}
