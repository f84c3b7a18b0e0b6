package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The fair per-node wake-up queue, example by example; {@link FairReleaseQueueProperties} has the
 * properties.
 */
class FairReleaseQueueTest {

  /**
   * Virtual time on one thread: a timer (a wait nobody can end) advances the clock by its delay.
   */
  static final class ManualClock implements WaitClock {
    long now = 1_000_000_000L;

    @Override
    public long nanoTime() {
      return now;
    }

    @Override
    public void sleepNanos(long nanos) {
      now += nanos;
    }

    @Override
    public long randomBelow(long bound) {
      return 0;
    }
  }

  @Test
  void hamiPollerStarvedByASustainedQueueGetsATurnAfterFiveSeconds() throws Exception {
    ManualClock clock = new ManualClock();
    long start = clock.now;
    FairReleaseQueue q = FairReleaseQueue.create(n -> true, clock);
    try (Waiter w = q.join("n")) {
      clock.now += FairReleaseQueue.TURN.toNanos() - 1;
      assertThat(q.released("n")).isTrue();
      assertThat(q.leavingTurn("n")).as("a queue shorter than the turn leaves none").isFalse();
      assertThat(w.await(Duration.ZERO)).isTrue();

      clock.now += 1;
      assertThat(q.released("n")).isTrue();
      assertThat(q.leavingTurn("n")).isTrue();
      assertThat(q.leavingTurn("other")).isFalse();
      assertThat(w.await(Duration.ofMillis(150)))
          .as("the wake-up is held while the lock is left to others")
          .isFalse();
      assertThat(q.leavingTurn("n")).isTrue();
      assertThat(w.await(Duration.ofSeconds(1))).isTrue();
      assertThat(clock.now - start)
          .as("it takes effect when the turn ends")
          .isEqualTo(FairReleaseQueue.TURN.plus(FairReleaseQueue.LEAVE).toNanos());
      assertThat(q.leavingTurn("n")).isFalse();

      assertThat(q.released("n")).isTrue();
      assertThat(q.leavingTurn("n")).as("the next turn comes one TURN later").isFalse();
    }
  }

  @Test
  void afterARaceLostToAnotherProcessAReleaseWakesOnlyAfterTwoToFourRoundTrips() throws Exception {
    ManualClock clock = new ManualClock(); // its random draws are 0: the pause is 2 round trips
    FairReleaseQueue q = FairReleaseQueue.create(n -> true, clock);
    try (Waiter w = q.join("n")) {
      attempt(q, clock, 6, LockReleaseSignal.Attempt.End.HELD_ELSEWHERE);
      assertThat(q.leavingTurn("n")).isFalse();
      assertThat(pauseAfterRelease(q, w, clock))
          .as("the winner of the last race goes first: two of the first measured round trip")
          .isEqualTo(Duration.ofMillis(12));

      attempt(q, clock, 2, LockReleaseSignal.Attempt.End.WON); // the average: 6 → 5 ms
      assertThat(q.released("n")).isTrue();
      assertThat(q.leavingTurn("n")).as("a win here ends the pause").isFalse();
      assertThat(w.await(Duration.ZERO)).isTrue();

      attempt(q, clock, 0, LockReleaseSignal.Attempt.End.HELD_HERE); // not a round trip measured
      assertThat(q.released("n")).isTrue();
      assertThat(q.leavingTurn("n")).as("this process's own holder is no rival").isFalse();
      assertThat(w.await(Duration.ZERO)).isTrue();

      attempt(q, clock, 0, LockReleaseSignal.Attempt.End.HELD_ELSEWHERE); // 5 → 3.75 ms
      assertThat(pauseAfterRelease(q, w, clock)).isEqualTo(Duration.ofMillis(7).plusNanos(500_000));
    }
    FairReleaseQueue fast = FairReleaseQueue.create(n -> true, clock);
    try (Waiter w = fast.join("n")) {
      attempt(fast, clock, 0, LockReleaseSignal.Attempt.End.HELD_ELSEWHERE);
      assertThat(pauseAfterRelease(fast, w, clock))
          .as("at least 1 ms")
          .isEqualTo(Duration.ofMillis(1));
    }
  }

  private static void attempt(
      FairReleaseQueue q, ManualClock clock, long millis, LockReleaseSignal.Attempt.End how) {
    LockReleaseSignal.Attempt a = q.beginAttempt("n").orElseThrow();
    clock.now += Duration.ofMillis(millis).toNanos();
    a.end(how);
  }

  /** A release, then how long until its wake-up reaches {@code w} (virtual time). */
  private static Duration pauseAfterRelease(FairReleaseQueue q, Waiter w, ManualClock clock)
      throws InterruptedException {
    long released = clock.now;
    assertThat(q.released("n")).isTrue();
    assertThat(q.leavingTurn("n")).isTrue();
    assertThat(w.await(Duration.ZERO)).as("not before the pause ends").isFalse();
    assertThat(w.await(Duration.ofSeconds(1))).isTrue();
    return Duration.ofNanos(clock.now - released);
  }

  @Test
  void aLostRaceNeverShortensATurnAndTheReleasesDuringTheTurnAreAllDelivered() throws Exception {
    ManualClock clock = new ManualClock();
    FairReleaseQueue q = FairReleaseQueue.create(n -> true, clock);
    Waiter first = q.join("n"); // the queue's 5 s begin with it
    clock.now += FairReleaseQueue.TURN.toNanos() - Duration.ofMillis(100).toNanos();
    try (Waiter w1 = q.join("n");
        Waiter w2 = q.join("n")) {
      first.close(); // the oldest waiter now waited 100 ms: a lost race pauses releases
      q.beginAttempt("n").orElseThrow().end(LockReleaseSignal.Attempt.End.HELD_ELSEWHERE);
      clock.now += Duration.ofMillis(100).toNanos();
      assertThat(q.released("n")).as("a turn for HAMi's poller: 200 ms").isTrue();
      assertThat(q.released("n")).as("a second release during the turn").isTrue();
      clock.now += FairReleaseQueue.LEAVE.toNanos() - 1;
      assertThat(q.leavingTurn("n"))
          .as("the loser's pause (at most 100 ms) does not replace the turn")
          .isTrue();
      assertThat(w1.await(Duration.ZERO)).isFalse();
      clock.now += 1;
      assertThat(w1.await(Duration.ZERO)).as("the first release's wake-up").isTrue();
      assertThat(w2.await(Duration.ZERO)).as("the second release's wake-up").isTrue();
    }
  }

  @Test
  void aReleaseBeforeTheWaitIsNeverLost() throws Exception {
    FairReleaseQueue q = FairReleaseQueue.create();
    try (Waiter w = q.join("n")) {
      assertThat(q.released("n")).isTrue();
      assertThat(w.await(Duration.ofDays(1))).isTrue();
      assertThat(w.await(Duration.ZERO)).as("one release, one wake-up").isFalse();
    }
  }

  @Test
  void aReleaseWithNobodyQueuedIsDroppedAndOtherNodesDoNotWake() throws Exception {
    FairReleaseQueue q = FairReleaseQueue.create();
    assertThat(q.released("n")).isFalse();
    try (Waiter w = q.join("n")) {
      assertThat(w.await(Duration.ZERO)).isFalse();
      assertThat(q.released("other")).isFalse();
      assertThat(w.await(Duration.ofMillis(1))).isFalse();
    }
  }

  @Test
  void releaseWakesTheOldestWaiterOnlyAndOthersKeepTheirPlace() throws Exception {
    FairReleaseQueue q = FairReleaseQueue.create();
    Waiter first = q.join("n");
    Waiter second = q.join("n");
    // handles are values: any thread may wait on them
    CompletableFuture<Boolean> a =
        CompletableFuture.supplyAsync(() -> await(first, Duration.ofSeconds(20)));
    CompletableFuture<Boolean> b =
        CompletableFuture.supplyAsync(() -> await(second, Duration.ofSeconds(20)));
    awaitWaiting(q, "n", 2);
    assertThat(q.released("n")).isTrue();
    assertThat(a.get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(q.waiting("n")).as("the second keeps waiting").isEqualTo(1);
    assertThat(b).isNotDone();
    first.close();
    assertThat(q.wakeAll("n")).isEqualTo(1);
    assertThat(b.get(10, TimeUnit.SECONDS)).isTrue();
    second.close();
    assertThat(q.trackedNodes()).isZero();
  }

  @Test
  void anUnusedWakeUpPassesToTheNextWaiterOnCloseAndDrainDropsIt() throws Exception {
    FairReleaseQueue q = FairReleaseQueue.create();
    Waiter first = q.join("n");
    Waiter second = q.join("n");
    assertThat(q.released("n")).isTrue(); // to the first, busy with its attempt
    first.close(); // it acquired anyway: the wake-up is the next waiter's
    assertThat(second.await(Duration.ZERO)).isTrue();
    assertThat(q.released("n")).isTrue();
    assertThat(second.drain()).isTrue();
    assertThat(second.await(Duration.ZERO)).isFalse();
    second.close();
    second.close(); // idempotent
    assertThatThrownBy(() -> second.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    assertThat(q.queueLength("n")).isZero();
    assertThat(q.trackedNodes()).isZero();
  }

  @Test
  void closeFromAnotherThreadWakesTheWaiterInsideAwait() throws Exception {
    FairReleaseQueue q = FairReleaseQueue.create();
    Waiter first = q.join("n");
    Waiter second = q.join("n");
    // the waiter waits a day; close (documented as callable from any thread) must end that wait
    CompletableFuture<Boolean> a =
        CompletableFuture.supplyAsync(() -> await(first, Duration.ofDays(1)));
    awaitWaiting(q, "n", 1);
    first.close();
    assertThat(a.get(10, TimeUnit.SECONDS)).as("woken by close: no wake-up consumed").isFalse();
    assertThatThrownBy(() -> first.await(Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    assertThat(q.queueLength("n")).isEqualTo(1);
    // the other waiter keeps its place and the next release
    assertThat(q.released("n")).isTrue();
    assertThat(second.await(Duration.ZERO)).isTrue();
    second.close();
    assertThat(q.trackedNodes()).isZero();
  }

  @Test
  void reliabilityIsTheFeedersAndArgumentsAreChecked() {
    assertThat(FairReleaseQueue.create().isReliable("n")).isFalse();
    assertThat(FairReleaseQueue.create(node -> node.equals("n"), WaitClock.SYSTEM).isReliable("n"))
        .isTrue();
    assertThatThrownBy(() -> FairReleaseQueue.create(null, WaitClock.SYSTEM))
        .hasMessageContaining("reliable");
    assertThatThrownBy(() -> FairReleaseQueue.create(n -> true, null))
        .hasMessageContaining("clock");
    assertThatThrownBy(() -> FairReleaseQueue.create().join(null)).hasMessageContaining("node");
    assertThatThrownBy(() -> FairReleaseQueue.create().released(null)).hasMessageContaining("node");
  }

  private static boolean await(Waiter w, Duration timeout) {
    try {
      return w.await(timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static void awaitWaiting(FairReleaseQueue q, String node, int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (q.waiting(node) < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("waiters did not queue: " + q.waiting(node) + " of " + n);
      }
      Thread.sleep(1);
    }
  }
}
