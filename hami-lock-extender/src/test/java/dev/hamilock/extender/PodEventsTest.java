package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.bind.memory.InMemoryCluster;
import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockOwner;
import dev.hamilock.extender.v1.ExtenderBindingArgs;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Pod Events deduplicated and rate-limited as client-go's recorder does (issue 15 item 9). */
class PodEventsTest {
  private final AtomicReference<Instant> now =
      new AtomicReference<>(Instant.parse("2026-12-01T00:00:00Z"));
  private final InstantSource clock = () -> now.get();

  @Test
  void theSameEventWithinTenMinutesIsSentOnceAndAPodGetsAtMost25ThenOnePerFiveMinutes() {
    InMemoryCluster c = InMemoryCluster.create();
    PodEvents ev = new PodEvents(c, clock);
    LockOwner w = LockOwner.of("default", "w1", "uid-w1");
    for (int i = 0; i < 100; i++) {
      ev.waited("node-a", w, Duration.ofSeconds(28), 280, false);
    }
    assertThat(c.events())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.reason()).isEqualTo("NodeLockWaitTimedOut");
              assertThat(e.message()).contains("node-a").contains("28000 ms");
            });
    assertThat(ev.suppressed()).isEqualTo(99);
    now.set(now.get().plus(Duration.ofMinutes(11)));
    ev.waited("node-a", w, Duration.ofSeconds(28), 280, false);
    assertThat(c.events()).hasSize(2);

    // 40 distinct messages for one pod: the bucket (refilled to 25 by the 11 minutes, one used
    // since) lets 24 through
    for (int i = 0; i < 40; i++) {
      ev.bindFailed("default", "w1", "uid-w1", "node-" + i, "node lock contention");
    }
    assertThat(c.events()).hasSize(26);
    now.set(now.get().plus(Duration.ofMinutes(5)));
    ev.bindFailed("default", "w1", "uid-w1", "node-x", "node lock contention");
    ev.bindFailed("default", "w1", "uid-w1", "node-y", "node lock contention");
    assertThat(c.events()).as("one more after 5 min").hasSize(27);
    // another pod has its own bucket
    ev.takenOver(
        "node-a",
        "hami.io/mutex.lock",
        LockOwner.of("default", "w2", "uid-w2"),
        "v".repeat(5000),
        AcquireOutcome.TOOK_OVER_EXPIRED);
    assertThat(c.events())
        .last()
        .satisfies(
            e -> {
              assertThat(e.name()).isEqualTo("w2");
              assertThat(e.reason()).isEqualTo("NodeLockTakenOver");
              assertThat(e.message())
                  .contains("expired lock hami.io/mutex.lock of node node-a")
                  .contains("more characters");
              assertThat(e.message().length()).isLessThan(400);
            });
  }

  @Test
  void aFailedBindRecordsBindFailedOnThePod() throws Exception {
    TestCluster t = new TestCluster(Duration.ZERO);
    PodEvents ev = new PodEvents(t.cluster, clock);
    HamiExtender e = t.extender.recordingEvents(ev).withMaxFilterNodes(10);
    t.addGangWorker("w1", 3000);
    t.holdLock("node-a");
    assertThat(e.bind(new ExtenderBindingArgs("w1", "default", "uid-w1", "node-a")).error())
        .isNotEmpty();
    assertThat(t.cluster.events())
        .anySatisfy(
            x -> {
              assertThat(x.name()).isEqualTo("w1");
              assertThat(x.reason()).isEqualTo("BindFailed");
              assertThat(x.message()).contains("bind to node node-a failed");
            });
  }
}
