package dev.hamilock.bind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.bind.HamiSchedulerFlags.InvalidSchedulerFlagException;
import dev.hamilock.device.spi.VendorRegistry;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 16 item 9: HAMi's scheduler flags and policies parsed and validated outside the extender
 * module, with HAMi's defaults, the lock-timeout precedence (HAMi#2790) and the refuse-to-start
 * rules; hami-lock-extender's {@code ExtenderConfig} parses them through this class.
 */
class HamiSchedulerFlagsTest {
  private static final Map<String, String> NO_ENV = Map.of();

  @Test
  void defaultsAreHamis() {
    HamiSchedulerFlags f = HamiSchedulerFlags.parse(NO_ENV);
    assertThat(f.nodeLockRetryTimeout()).isEqualTo(Duration.ofSeconds(28));
    assertThat(f.nodeLockTimeout()).isEqualTo(Duration.ofMinutes(5));
    assertThat(f.extenderHttpTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(f.nodeSchedulerPolicy()).isEqualTo("binpack");
    assertThat(f.gpuSchedulerPolicy()).isEqualTo("spread");
    assertThat(f.retryPolicy().retryTimeout()).isEqualTo(Duration.ofSeconds(28));
    assertThat(f.retryPolicy().pollInterval()).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void parsesBothFormsInGoDurationSyntaxAndRoundTripsThroughToArgs() {
    HamiSchedulerFlags f =
        HamiSchedulerFlags.parse(
            NO_ENV,
            "--node-lock-retry-timeout=10s",
            "--node-lock-timeout",
            "2m30s",
            "--extender-http-timeout=20s",
            "--node-scheduler-policy",
            " spread ",
            "--gpu-scheduler-policy=binpack");
    assertThat(f.nodeLockRetryTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(f.nodeLockTimeout()).isEqualTo(Duration.ofSeconds(150));
    assertThat(f.extenderHttpTimeout()).isEqualTo(Duration.ofSeconds(20));
    assertThat(f.nodeSchedulerPolicy()).isEqualTo("spread");
    assertThat(f.gpuSchedulerPolicy()).isEqualTo("binpack");
    assertThat(HamiSchedulerFlags.parse(NO_ENV, f.toArgs().toArray(String[]::new))).isEqualTo(f);
    assertThat(
            HamiSchedulerFlags.parse(NO_ENV, "--node-lock-retry-timeout=0")
                .retryPolicy()
                .retryTimeout())
        .as("0 disables waiting")
        .isZero();
  }

  @Test
  void lockTimeoutPrecedenceIsFlagThenEnvironmentThenFiveMinutes() {
    Map<String, String> env = Map.of("HAMI_NODELOCK_EXPIRE", "90s");
    assertThat(HamiSchedulerFlags.parse(env).nodeLockTimeout()).isEqualTo(Duration.ofSeconds(90));
    assertThat(HamiSchedulerFlags.parse(env, "--node-lock-timeout=2m").nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(2));
    assertThat(HamiSchedulerFlags.parse(NO_ENV).nodeLockTimeout()).isEqualTo(Duration.ofMinutes(5));
    assertThatThrownBy(() -> HamiSchedulerFlags.parse(Map.of("HAMI_NODELOCK_EXPIRE", "soon")))
        .isInstanceOf(InvalidSchedulerFlagException.class)
        .hasMessageContaining("soon");
    assertThat(
            HamiSchedulerFlags.parse(
                    Map.of("HAMI_NODELOCK_EXPIRE", "soon"), "--node-lock-timeout=1m")
                .nodeLockTimeout())
        .as("an explicit flag does not read the environment")
        .isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void refusesBadValuesNamingTheFlagAndTheValue() {
    assertThatThrownBy(() -> HamiSchedulerFlags.parse(NO_ENV, "--node-lock-retry-timeout=30s"))
        .isInstanceOf(InvalidSchedulerFlagException.class)
        .as("the rule said once, with its reason once")
        .hasMessage(
            "refusing to start: --node-lock-retry-timeout=30s must be below"
                + " --extender-http-timeout=30s (otherwise kube-scheduler abandons the bind while"
                + " the extender still waits)");
    assertThatThrownBy(() -> HamiSchedulerFlags.parse(NO_ENV, "--gpu-scheduler-policy=binpak"))
        .isInstanceOf(InvalidSchedulerFlagException.class)
        .hasMessageContaining("--gpu-scheduler-policy")
        .hasMessageContaining("binpak");
    assertThatThrownBy(
            () -> HamiSchedulerFlags.parse(NO_ENV, "--node-scheduler-policy=topology-aware"))
        .isInstanceOf(InvalidSchedulerFlagException.class)
        .hasMessageContaining("--node-scheduler-policy");
    assertThatThrownBy(() -> HamiSchedulerFlags.parse(NO_ENV, "--node-lock-timeout=0s"))
        .hasMessageContaining("--node-lock-timeout must be positive");
    assertThatThrownBy(() -> HamiSchedulerFlags.parse(NO_ENV, "--node-lock-retry-timeout=-1s"))
        .hasMessageContaining("must not be negative");
    assertThatThrownBy(() -> HamiSchedulerFlags.parse(NO_ENV, "--node-lock-timeout=5 minutes"))
        .hasMessageContaining("invalid argument \"5 minutes\" for \"--node-lock-timeout\"");
    assertThatThrownBy(() -> HamiSchedulerFlags.parse(NO_ENV, "--port=8080"))
        .hasMessageContaining("unknown flag: --port");
    assertThatThrownBy(() -> HamiSchedulerFlags.parse(NO_ENV, "--node-lock-timeout"))
        .hasMessageContaining("flag needs an argument: --node-lock-timeout");
  }

  @Test
  void theFlagsFeedTheFitterAndTheBuilderComposesWithALargerParser() {
    HamiSchedulerFlags.Builder b = HamiSchedulerFlags.builder().environment(NO_ENV);
    assertThat(b.set("--gpu-scheduler-policy", "binpack")).isTrue();
    assertThat(b.set("--port", "8080"))
        .as("not a HAMi flag: left to the caller's parser")
        .isFalse();
    HamiSchedulerFlags f = b.build();
    assertThat(f.gpuSchedulerPolicy()).isEqualTo("binpack");
    assertThat(f.podFitter(VendorRegistry.discover())).isNotNull();
    assertThatThrownBy(() -> f.podFitter(null)).hasMessageContaining("registry");
  }
}
