package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.AcquireOutcome;
import dev.hamilock.core.LockContentionException;
import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockSettings;
import dev.hamilock.core.OwnerLiveness;
import dev.hamilock.core.OwnerLiveness.BindPhase;
import dev.hamilock.core.OwnerLiveness.HolderStatus;
import dev.hamilock.core.OwnerLiveness.PodPhase;
import dev.hamilock.core.OwnerLiveness.State;
import dev.hamilock.testing.logs.LogCapture;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 13 item 1 (HAMi#3096): lock {@code 2026-06-14T15:00:00Z,default,pod-a}, pod-a bound to the
 * node, Pending, {@code hami.io/bind-phase: allocating}; at 15:05:03Z pod-b must not take the lock
 * over by expiry alone (a stalled device plugin would serve pod-a with pod-b's allocation). Every
 * branch that does transfer is listed too.
 */
class Hami3096StalledAllocateTest {

  private static final String NODE = "gpu-1";
  private static final String KEY = "hami.io/mutex.lock";
  private static final LockOwner POD_B = LockOwner.of("default", "pod-b");
  private static final String VALUE = "2026-06-14T15:00:00Z,default,pod-a";

  private final MutableClock clock = new MutableClock("2026-06-14T15:00:00Z");
  private final InMemoryLockStore store = new InMemoryLockStore();
  private final AtomicReference<HolderStatus> podA = new AtomicReference<>(allocating());

  private static HolderStatus allocating() {
    return HolderStatus.of(
        State.ALIVE, Optional.of(NODE), PodPhase.PENDING, Optional.of(BindPhase.ALLOCATING));
  }

  private StoreNodeLock lock() {
    OwnerLiveness liveness =
        new OwnerLiveness() {
          @Override
          public State check(LockOwner owner) {
            return podA.get().state();
          }

          @Override
          public HolderStatus status(LockOwner owner) {
            return podA.get();
          }
        };
    return StoreNodeLock.create(
        store,
        LockSettings.builder()
            .lockTimeout(Duration.ofMinutes(5))
            .clock(clock)
            .ownerLiveness(liveness)
            .livenessCacheTtl(Duration.ZERO)
            .build());
  }

  /**
   * The report's case: contention naming the stuck holder, then transfer once Allocate finished.
   */
  @Test
  void anExpiredLockWhoseHolderIsStillAllocatingIsNotTakenOver() throws Exception {
    StoreNodeLock l = lock();
    store.createIfAbsent(NODE, KEY, VALUE);
    assertThatThrownBy(() -> l.acquire(NODE, POD_B)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(5).plusSeconds(3)); // 15:05:03Z
    try (LogCapture log = LogCapture.start()) {
      for (int i = 0; i < 3; i++) { // however often it is asked (the WARN is logged once)
        assertThatThrownBy(() -> l.acquire(NODE, POD_B))
            .isInstanceOfSatisfying(
                LockContentionException.class,
                e ->
                    assertThat(e.getMessage())
                        .contains("default/pod-a")
                        .contains("allocating")
                        .contains("HAMi#3096")
                        .contains("has expired"));
      }
      clock.advance(
          Duration.ofHours(5)); // no second deadline: still held while it may be allocated
      assertThatThrownBy(() -> l.acquire(NODE, POD_B)).isInstanceOf(LockContentionException.class);
      assertThat(
              log.expect(
                  "WARN dev\\.hamilock\\.core\\.store\\.StoreNodeLock - node gpu-1: lock"
                      + " hami\\.io/mutex\\.lock=\"2026-06-14T15:00:00Z,default,pod-a\" has"
                      + " expired \\(age 5m3s .* but its holder default/pod-a is bound to this node,"
                      + " PENDING, bind-phase allocating: .*\\(HAMi#3096\\)"))
          .as("the WARN is logged once per value, however often the lock is asked for")
          .hasSize(1);
    }
    assertThat(store.read(NODE, KEY)).contains(VALUE);

    podA.set(
        HolderStatus.of(
            State.ALIVE, Optional.of(NODE), PodPhase.PENDING, Optional.of(BindPhase.SUCCESS)));
    assertThat(l.acquire(NODE, POD_B)).isEqualTo(AcquireOutcome.TOOK_OVER_EXPIRED);
  }

  static Stream<Arguments> transfers() {
    return Stream.of(
        Arguments.of("gone", HolderStatus.of(State.NOT_FOUND), AcquireOutcome.TOOK_OVER_DANGLING),
        Arguments.of(
            "terminating (operator deleted it)",
            HolderStatus.of(
                State.TERMINATING,
                Optional.of(NODE),
                PodPhase.PENDING,
                Optional.of(BindPhase.ALLOCATING)),
            AcquireOutcome.TOOK_OVER_DANGLING),
        Arguments.of(
            "Succeeded",
            HolderStatus.of(
                State.SUCCEEDED,
                Optional.of(NODE),
                PodPhase.SUCCEEDED,
                Optional.of(BindPhase.ALLOCATING)),
            AcquireOutcome.TOOK_OVER_DANGLING),
        Arguments.of(
            "Failed",
            HolderStatus.of(
                State.FAILED,
                Optional.of(NODE),
                PodPhase.FAILED,
                Optional.of(BindPhase.ALLOCATING)),
            AcquireOutcome.TOOK_OVER_DANGLING),
        Arguments.of(
            "Running",
            HolderStatus.of(
                State.ALIVE,
                Optional.of(NODE),
                PodPhase.RUNNING,
                Optional.of(BindPhase.ALLOCATING)),
            AcquireOutcome.TOOK_OVER_EXPIRED),
        Arguments.of(
            "bound elsewhere",
            HolderStatus.of(
                State.ALIVE,
                Optional.of("gpu-2"),
                PodPhase.PENDING,
                Optional.of(BindPhase.ALLOCATING)),
            AcquireOutcome.TOOK_OVER_EXPIRED),
        Arguments.of(
            "not bound",
            HolderStatus.of(
                State.ALIVE, Optional.empty(), PodPhase.PENDING, Optional.of(BindPhase.ALLOCATING)),
            AcquireOutcome.TOOK_OVER_EXPIRED),
        Arguments.of(
            "bind-phase failed",
            HolderStatus.of(
                State.ALIVE, Optional.of(NODE), PodPhase.PENDING, Optional.of(BindPhase.FAILED)),
            AcquireOutcome.TOOK_OVER_EXPIRED),
        Arguments.of(
            "bind-phase success",
            HolderStatus.of(
                State.ALIVE, Optional.of(NODE), PodPhase.PENDING, Optional.of(BindPhase.SUCCESS)),
            AcquireOutcome.TOOK_OVER_EXPIRED),
        Arguments.of(
            "details unknown (assume-alive embedders)",
            HolderStatus.of(State.ALIVE),
            AcquireOutcome.TOOK_OVER_EXPIRED));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("transfers")
  void anExpiredLockTransfersWhenItsHolderCanNoLongerBeAllocatedHere(
      String why, HolderStatus status, AcquireOutcome expected) throws Exception {
    StoreNodeLock l = lock();
    store.createIfAbsent(NODE, KEY, VALUE);
    podA.set(allocating());
    assertThatThrownBy(() -> l.acquire(NODE, POD_B)).isInstanceOf(LockContentionException.class);
    clock.advance(Duration.ofMinutes(5).plusSeconds(3));
    podA.set(status);
    assertThat(l.acquire(NODE, POD_B)).as(why).isEqualTo(expected);
    assertThat(store.read(NODE, KEY)).contains("2026-06-14T15:05:03Z,default,pod-b");
  }

  @Test
  void absentOrUnrecognisedBindPhaseOfABoundPendingHolderCountsAsMayStillBeAllocated() {
    for (Optional<BindPhase> phase :
        java.util.List.of(
            Optional.<BindPhase>empty(),
            Optional.of(BindPhase.UNRECOGNISED),
            Optional.of(BindPhase.ALLOCATING))) {
      assertThat(
              HolderStatus.of(State.ALIVE, Optional.of(NODE), PodPhase.PENDING, phase)
                  .mayStillBeAllocated(NODE))
          .as(phase.toString())
          .isTrue();
      assertThat(
              HolderStatus.of(State.ALIVE, Optional.of(NODE), PodPhase.UNKNOWN, phase)
                  .mayStillBeAllocated(NODE))
          .as("phase Unknown, " + phase)
          .isTrue();
    }
    assertThat(BindPhase.parse("allocating")).contains(BindPhase.ALLOCATING);
    assertThat(BindPhase.parse("Allocating")).contains(BindPhase.UNRECOGNISED);
    assertThat(BindPhase.parse(null)).isEmpty();
    assertThat(PodPhase.parse("Running")).isEqualTo(PodPhase.RUNNING);
    assertThat(PodPhase.parse("")).isEqualTo(PodPhase.PENDING);
  }
}
