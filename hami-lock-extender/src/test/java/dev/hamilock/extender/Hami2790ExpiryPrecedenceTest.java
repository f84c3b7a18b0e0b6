package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.bind.HamiSchedulerFlags;
import dev.hamilock.core.LockSettings;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * HAMi#2790: with {@code HAMI_NODELOCK_EXPIRE=1m} and no {@code --node-lock-timeout}, {@code
 * ExtenderConfig.parse} gave 5m. Right: explicit flag &gt; {@code HAMI_NODELOCK_EXPIRE} &gt; 5 min,
 * resolved by the lock stack's one function ({@link LockSettings#resolveLockTimeout}).
 */
class Hami2790ExpiryPrecedenceTest {
  static final Map<String, String> ONE_MINUTE = Map.of("HAMI_NODELOCK_EXPIRE", "1m");

  @Test
  void theEnvironmentAppliesWhenTheFlagIsAbsent() {
    assertThat(ExtenderConfig.parse(ONE_MINUTE).schedulerFlags().nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(ExtenderConfig.parse(ONE_MINUTE, "--port=0").schedulerFlags().nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(
            ExtenderConfig.builder()
                .schedulerFlags(HamiSchedulerFlags.builder().environment(ONE_MINUTE).build())
                .build()
                .schedulerFlags()
                .nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void theExplicitFlagWins() {
    assertThat(
            ExtenderConfig.parse(ONE_MINUTE, "--node-lock-timeout=7m")
                .schedulerFlags()
                .nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(7));
    assertThat(
            ExtenderConfig.builder()
                .schedulerFlags(HamiSchedulerFlags.parse(ONE_MINUTE, "--node-lock-timeout=1m30s"))
                .build()
                .schedulerFlags()
                .nodeLockTimeout())
        .isEqualTo(Duration.ofSeconds(90));
  }

  @Test
  void fiveMinutesWhenNeitherIsSetAndEmptyMeansUnset() {
    assertThat(ExtenderConfig.parse(Map.of()).schedulerFlags().nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(5));
    assertThat(
            ExtenderConfig.parse(Map.of("HAMI_NODELOCK_EXPIRE", ""))
                .schedulerFlags()
                .nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void sameAnswerAsTheLockStacksResolution() {
    for (Map<String, String> env :
        java.util.List.of(
            Map.<String, String>of(),
            ONE_MINUTE,
            Map.of("HAMI_NODELOCK_EXPIRE", "1h30m"),
            Map.of("HAMI_NODELOCK_EXPIRE", "300s"))) {
      assertThat(ExtenderConfig.parse(env).schedulerFlags().nodeLockTimeout())
          .isEqualTo(LockSettings.resolveLockTimeout(Optional.empty(), env));
      assertThat(
              ExtenderConfig.parse(env, "--node-lock-timeout=2m")
                  .schedulerFlags()
                  .nodeLockTimeout())
          .isEqualTo(LockSettings.resolveLockTimeout(Optional.of(Duration.ofMinutes(2)), env));
    }
  }

  @Test
  void anInvalidEnvironmentValueRefusesToStartUnlessTheFlagOverridesIt() {
    assertThatThrownBy(() -> ExtenderConfig.parse(Map.of("HAMI_NODELOCK_EXPIRE", "five")))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("HAMI_NODELOCK_EXPIRE")
        .hasMessageContaining("five");
    assertThat(
            ExtenderConfig.parse(
                    Map.of("HAMI_NODELOCK_EXPIRE", "five"), "--node-lock-timeout", "3m")
                .schedulerFlags()
                .nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(3));
  }

  @Test
  void theResolvedValueIsTheOneTheLocksUse() {
    ExtenderConfig c = ExtenderConfig.parse(ONE_MINUTE);
    var cluster = dev.hamilock.bind.memory.InMemoryCluster.create();
    assertThat(
            dev.hamilock.core.store.StoreNodeLock.create(
                    cluster.lockStore(), c.schedulerFlags().lockSettings())
                .lockTimeout())
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(c.toArgs()).contains("--node-lock-timeout=1m0s");
  }
}
