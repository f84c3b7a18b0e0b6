package dev.hamilock.core.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.LockOwner;
import dev.hamilock.core.LockRecord;
import dev.hamilock.core.OwnerLiveness.BindPhase;
import dev.hamilock.core.OwnerLiveness.HolderStatus;
import dev.hamilock.core.OwnerLiveness.PodPhase;
import dev.hamilock.core.OwnerLiveness.State;
import dev.hamilock.core.store.LockJudgement.Decision;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The pure lock rules {@link StoreNodeLock} and the doctor share. */
class LockJudgementTest {

  private static final Duration TIMEOUT = Duration.ofMinutes(5);
  private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");
  private static final LockOwner A = LockOwner.of("default", "a");

  private static Optional<LockRecord> stamped(Duration ago) {
    return Optional.of(LockRecord.of(NOW.minus(ago), A));
  }

  private static Optional<HolderStatus> holder(State s, String node, PodPhase p, BindPhase b) {
    return Optional.of(HolderStatus.of(s, Optional.ofNullable(node), p, Optional.ofNullable(b)));
  }

  @Test
  void youngLockIsHeldAndOldOneExpiredWhenFirstSeenAtItsStamp() {
    Instant seen6 = NOW.minus(Duration.ofMinutes(6));
    assertThat(
            LockJudgement.judge(
                    "n",
                    stamped(Duration.ofMinutes(1)),
                    Optional.empty(),
                    NOW,
                    NOW.minus(Duration.ofMinutes(1)),
                    TIMEOUT)
                .decision())
        .isEqualTo(Decision.HELD);
    LockJudgement.Result r =
        LockJudgement.judge(
            "n", stamped(Duration.ofMinutes(6)), Optional.empty(), NOW, seen6, TIMEOUT);
    assertThat(r.decision()).isEqualTo(Decision.EXPIRED);
    assertThat(r.stampAge()).contains(Duration.ofMinutes(6));
  }

  @Test
  void oldStampFirstSeenJustNowIsHeldClockSkewRule() {
    assertThat(
            LockJudgement.judge(
                    "n", stamped(Duration.ofHours(1)), Optional.empty(), NOW, NOW, TIMEOUT)
                .decision())
        .isEqualTo(Decision.HELD);
  }

  @Test
  void goneHolderIsDanglingEvenWhenYoung() {
    assertThat(
            LockJudgement.judge(
                    "n",
                    stamped(Duration.ofSeconds(1)),
                    Optional.of(HolderStatus.of(State.NOT_FOUND)),
                    NOW,
                    NOW,
                    TIMEOUT)
                .decision())
        .isEqualTo(Decision.DANGLING);
  }

  @Test
  void expiredLockOfBoundPendingAllocatingHolderIsStuckNotExpired() {
    Instant seen = NOW.minus(Duration.ofMinutes(6));
    assertThat(
            LockJudgement.judge(
                    "n",
                    stamped(Duration.ofMinutes(6)),
                    holder(State.ALIVE, "n", PodPhase.PENDING, BindPhase.ALLOCATING),
                    NOW,
                    seen,
                    TIMEOUT)
                .decision())
        .isEqualTo(Decision.STUCK_ALLOCATING);
    // bound elsewhere, Running, or served: plain expiry
    assertThat(
            LockJudgement.judge(
                    "n",
                    stamped(Duration.ofMinutes(6)),
                    holder(State.ALIVE, "m", PodPhase.PENDING, BindPhase.ALLOCATING),
                    NOW,
                    seen,
                    TIMEOUT)
                .decision())
        .isEqualTo(Decision.EXPIRED);
    assertThat(
            LockJudgement.judge(
                    "n",
                    stamped(Duration.ofMinutes(6)),
                    holder(State.ALIVE, "n", PodPhase.RUNNING, BindPhase.ALLOCATING),
                    NOW,
                    seen,
                    TIMEOUT)
                .decision())
        .isEqualTo(Decision.EXPIRED);
    assertThat(
            LockJudgement.judge(
                    "n",
                    stamped(Duration.ofMinutes(6)),
                    holder(State.ALIVE, "n", PodPhase.PENDING, BindPhase.SUCCESS),
                    NOW,
                    seen,
                    TIMEOUT)
                .decision())
        .isEqualTo(Decision.EXPIRED);
  }

  @Test
  void malformedValueExpiresOneTimeoutAfterFirstSight() {
    assertThat(
            LockJudgement.judge(
                    "n", Optional.empty(), Optional.empty(), NOW, NOW.minus(TIMEOUT), TIMEOUT)
                .decision())
        .isEqualTo(Decision.HELD);
    LockJudgement.Result r =
        LockJudgement.judge(
            "n",
            Optional.empty(),
            Optional.empty(),
            NOW,
            NOW.minus(TIMEOUT).minusSeconds(1),
            TIMEOUT);
    assertThat(r.decision()).isEqualTo(Decision.EXPIRED);
    assertThat(r.stampAge()).isEmpty();
  }

  @Test
  void farTimestampsNeverThrowAndBadArgumentsAreNamed() {
    Optional<LockRecord> far = Optional.of(LockRecord.of(Instant.parse("9999-12-31T23:59:59Z"), A));
    assertThat(
            LockJudgement.judge(
                    "n", far, Optional.empty(), NOW, NOW.minus(Duration.ofMinutes(11)), TIMEOUT)
                .decision())
        .isEqualTo(Decision.EXPIRED);
    assertThatThrownBy(
            () -> LockJudgement.judge("n", far, Optional.empty(), NOW, NOW, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lockTimeout");
  }
}
