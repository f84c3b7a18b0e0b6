package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.core.FairReleaseQueue;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.OwnerLiveness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Who starts and closes a backend's release feeder, and in which order (issue 27). */
class LockStackTest {

  private final List<String> events = new ArrayList<>();

  private final ReleaseFeeder feeder =
      new ReleaseFeeder() {
        @Override
        public FairReleaseQueue releaseSignal(String key) {
          return FairReleaseQueue.create();
        }

        @Override
        public Optional<String> observedLockValue(String node, String key) {
          return Optional.empty();
        }

        @Override
        public ReleaseFeeder start() {
          events.add("start");
          return this;
        }

        @Override
        public boolean isConnected() {
          return false;
        }

        @Override
        public boolean awaitSynced(Duration timeout) {
          return false;
        }

        @Override
        public long relistCount() {
          return 0;
        }

        @Override
        public long releaseCount() {
          return 0;
        }

        @Override
        public void close() {
          events.add("close");
        }
      };

  private final LockBackend backend =
      new LockBackend(
          (key, releases) -> {
            events.add("store " + key);
            return new InMemoryLockStore();
          },
          Optional.of(feeder),
          OwnerLiveness.assumeAlive());

  @Test
  void owningStackStartsTheFeederAfterTheKeysStoreAndClosesIt() {
    LockStack stack = new LockStack(LockSettings.defaults(), backend, true);
    assertThat(events).containsExactly("store hami.io/mutex.lock", "start");
    stack.close();
    assertThat(events).containsExactly("store hami.io/mutex.lock", "start", "close");
    assertThat(stack.toString()).endsWith(", watch=" + feeder + "]");
  }

  @Test
  void borrowingStackNeitherStartsNorClosesTheFeeder() {
    LockStack stack = new LockStack(LockSettings.defaults(), backend, false);
    stack.close();
    assertThat(events).containsExactly("store hami.io/mutex.lock");
    assertThat(stack.watch()).contains(feeder);
  }
}
