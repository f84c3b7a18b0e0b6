package dev.hamilock.core.acquire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.NodeLockListener;
import dev.hamilock.core.RetryPolicy;
import dev.hamilock.core.store.InMemoryLockStore;
import dev.hamilock.core.store.StoreNodeLock;
import dev.hamilock.testing.logs.LogCapture;
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

  /** What NodeLockListener logs for a listener that throws (captured and asserted). */
  static final String LISTENER_FAILED =
      "WARN dev\\.hamilock\\.core\\.NodeLockListener - node lock listener .* failed on event";

  @Test
  void aThrowingLockListenerDoesNotTurnAnAcquiredLockIntoAnError() throws Exception {
    StoreNodeLock lock =
        StoreNodeLock.create(
            new InMemoryLockStore(),
            LockSettings.builder().environment(Map.of()).listener(BROKEN).build());

    try (LogCapture log = LogCapture.start()) {
      assertThat(lock.acquire(NODE, POD)).isEqualTo(AcquireOutcome.ACQUIRED);
      assertThat(lock.read(NODE).flatMap(LockRecord::owner)).contains(POD);
      assertThat(lock.release(NODE, POD)).isTrue();
      assertThat(lock.read(NODE)).isEmpty();
      assertThat(log.expect(LISTENER_FAILED)).as("each failed event is logged").hasSize(2);
    }
  }

  @Test
  void aThrowingAcquirerListenerDoesNotHideTheAcquisition() throws Exception {
    StoreNodeLock lock =
        StoreNodeLock.create(
            new InMemoryLockStore(), LockSettings.builder().environment(Map.of()).build());

    LockAcquisition a;
    try (LogCapture log = LogCapture.start()) {
      a =
          NodeLockAcquirer.create(
                  LockSettings.builder()
                      .retryPolicy(RetryPolicy.defaults())
                      .listener(BROKEN)
                      .build())
              .acquire(NODE, POD, true, List.of(lock));
      assertThat(log.expect(LISTENER_FAILED)).isNotEmpty();
    }

    assertThat(a.keys()).containsExactly(lock.key());
    assertThat(lock.read(NODE).flatMap(LockRecord::owner)).contains(POD);
  }
}
