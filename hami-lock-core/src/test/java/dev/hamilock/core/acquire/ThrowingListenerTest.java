package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.StoreNodeLock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A listener is caller code (metrics): when it throws, the lock code must neither lose track of a
 * lock it took (the exception would replace the result and the caller would never release it) nor
 * let an unchecked exception escape from library internals.
 */
class ThrowingListenerTest {

  private static final String NODE = "worker-1";
  private static final LockOwner POD = LockOwner.of("default", "gang-pod-1");

  private static final NodeLockListener BROKEN =
      new NodeLockListener() {
        @Override
        public void acquired(String node, String key, LockOwner owner, AcquireOutcome outcome) {
          throw new IllegalStateException("metrics registry closed");
        }

        @Override
        public void released(String node, String key, LockOwner owner) {
          throw new IllegalStateException("metrics registry closed");
        }

        @Override
        public void waited(
            String node, LockOwner owner, Duration waited, int attempts, boolean acquired) {
          throw new IllegalStateException("metrics registry closed");
        }
      };

  @Test
  void aThrowingLockListenerDoesNotTurnAnAcquiredLockIntoAnError() throws Exception {
    StoreNodeLock lock =
        StoreNodeLock.builder(new InMemoryLockStore())
            .environment(Map.of())
            .listener(BROKEN)
            .build();

    assertThat(lock.acquire(NODE, POD)).isEqualTo(AcquireOutcome.ACQUIRED);
    assertThat(lock.read(NODE).flatMap(LockRecord::owner)).contains(POD);
    assertThat(lock.release(NODE, POD)).isTrue();
    assertThat(lock.read(NODE)).isEmpty();
  }

  @Test
  void aThrowingAcquirerListenerDoesNotHideTheAcquisition() throws Exception {
    StoreNodeLock lock =
        StoreNodeLock.builder(new InMemoryLockStore()).environment(Map.of()).build();

    LockAcquisition a =
        NodeLockAcquirer.create(RetryPolicy.defaults(), BROKEN)
            .acquire(NODE, POD, true, List.of(lock));

    assertThat(a.keys()).containsExactly(lock.key());
    assertThat(lock.read(NODE).flatMap(LockRecord::owner)).contains(POD);
  }
}
