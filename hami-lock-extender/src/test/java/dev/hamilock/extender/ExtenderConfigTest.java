package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.hamilock.core.RetryPolicy;
import dev.hamilock.testing.generators.Props;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ExtenderConfigTest {

  @Test
  void defaultsAreHamis() {
    ExtenderConfig c = ExtenderConfig.parse();
    assertThat(c.schedulerFlags().nodeLockRetryTimeout()).isEqualTo(Duration.ofSeconds(28));
    assertThat(c.schedulerFlags().nodeLockTimeout()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.schedulerFlags().extenderHttpTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.port()).isEqualTo(8080);
    assertThat(c.schedulerFlags().nodeSchedulerPolicy()).isEqualTo("binpack");
    assertThat(c.schedulerFlags().gpuSchedulerPolicy()).isEqualTo("spread");
    assertThat(c.schedulerFlags().retryPolicy()).isEqualTo(RetryPolicy.defaults());
    assertThat(c).isEqualTo(ExtenderConfig.builder().build());
  }

  @Test
  void parsesGoDurationsInBothFlagForms() {
    ExtenderConfig c =
        ExtenderConfig.parse(
            "--node-lock-retry-timeout=1m30s",
            "--node-lock-timeout",
            "300s",
            "--extender-http-timeout=2m",
            "--port",
            "0",
            "--node-scheduler-policy=spread",
            "--gpu-scheduler-policy",
            "binpack",
            "--bind-address=127.0.0.1");
    assertThat(c.schedulerFlags().nodeLockRetryTimeout()).isEqualTo(Duration.ofSeconds(90));
    assertThat(c.schedulerFlags().nodeLockTimeout()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.schedulerFlags().extenderHttpTimeout()).isEqualTo(Duration.ofMinutes(2));
    assertThat(c.port()).isZero();
    assertThat(c.bindAddress()).isEqualTo("127.0.0.1");
    assertThat(c.schedulerFlags().nodeSchedulerPolicy()).isEqualTo("spread");
    assertThat(c.schedulerFlags().gpuSchedulerPolicy()).isEqualTo("binpack");
    assertThat(ExtenderConfig.parse(c.toArgs().toArray(String[]::new))).isEqualTo(c);
  }

  @Test
  void zeroDisablesTheGangRetry() {
    ExtenderConfig c = ExtenderConfig.parse("--node-lock-retry-timeout=0");
    assertThat(c.schedulerFlags().nodeLockRetryTimeout()).isZero();
    assertThat(c.schedulerFlags().retryPolicy().retriesEnabled()).isFalse();
  }

  @Test
  void refusesToStartWhenRetryIsNotBelowTheHttpTimeout() {
    assertThatThrownBy(() -> ExtenderConfig.parse("--node-lock-retry-timeout=30s"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("refusing to start")
        .hasMessageContaining("--node-lock-retry-timeout=30s")
        .hasMessageContaining("--extender-http-timeout=30s");
    assertThatThrownBy(
            () ->
                ExtenderConfig.parse("--node-lock-retry-timeout=28s", "--extender-http-timeout=5s"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("--node-lock-retry-timeout=28s")
        .hasMessageContaining("--extender-http-timeout=5s");
  }

  @Test
  void badFlagsAreRejectedNamingFlagAndValue() {
    assertThatThrownBy(() -> ExtenderConfig.parse("--node-lock-retry-timeout=28"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("\"28\"")
        .hasMessageContaining("--node-lock-retry-timeout");
    assertThatThrownBy(() -> ExtenderConfig.parse("--node-lock-timeout=5 m"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("--node-lock-timeout");
    assertThatThrownBy(() -> ExtenderConfig.parse("--node-lock-timeout=0"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("must be positive");
    assertThatThrownBy(() -> ExtenderConfig.parse("--node-lock-retry-timeout=-1s"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("negative");
    assertThatThrownBy(() -> ExtenderConfig.parse("--lock-timeout=5m"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("unknown flag: --lock-timeout");
    assertThatThrownBy(() -> ExtenderConfig.parse("--port"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("needs an argument: --port");
    assertThatThrownBy(() -> ExtenderConfig.parse("--port=http"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("\"http\"");
    assertThatThrownBy(() -> ExtenderConfig.parse("--port=70000"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("70000");
    assertThatThrownBy(() -> ExtenderConfig.parse("--node-scheduler-policy=random"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("random");
    assertThatThrownBy(() -> ExtenderConfig.parse("--health-port=70000"))
        .isInstanceOf(InvalidExtenderConfigException.class)
        .hasMessageContaining("--health-port")
        .hasMessageContaining("70000");
  }

  @Test
  void healthPortIsOptionalAndRoundTripsThroughItsFlag() {
    assertThat(ExtenderConfig.parse().serving().healthPort()).isEmpty();
    ExtenderConfig c = ExtenderConfig.parse("--health-port", "8889");
    assertThat(c.serving().healthPort()).hasValue(8889);
    assertThat(c.toArgs()).contains("--health-port=8889");
    assertThat(ExtenderConfig.parse(c.toArgs().toArray(String[]::new)).serving().healthPort())
        .hasValue(8889);
  }

  @Test
  void startsIffRetryTimeoutIsBelowHttpTimeout() {
    Props.qt(300)
        .forAll(longs().between(0, 120_000), longs().between(1, 120_000))
        .checkAssert(ExtenderConfigTest::startsIffBelow);
  }

  private static void startsIffBelow(long retryMs, long httpMs) {
    String[] args = {
      "--node-lock-retry-timeout=" + retryMs + "ms", "--extender-http-timeout=" + httpMs + "ms"
    };
    if (retryMs < httpMs) {
      assertThat(ExtenderConfig.parse(args).schedulerFlags().retryPolicy().retryTimeout())
          .isEqualTo(Duration.ofMillis(retryMs));
    } else {
      assertThatThrownBy(() -> ExtenderConfig.parse(args))
          .isInstanceOf(InvalidExtenderConfigException.class);
    }
  }
}
