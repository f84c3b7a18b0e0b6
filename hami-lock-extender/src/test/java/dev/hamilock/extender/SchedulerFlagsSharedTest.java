package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.hamilock.bind.HamiSchedulerFlags;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 16 item 9: the extender parses HAMi's flags with hami-lock-bind's {@link
 * HamiSchedulerFlags} (one parser): the same values, the same precedence, the same refusals and
 * messages as a scheduler outside this module gets.
 */
class SchedulerFlagsSharedTest {
  private static final Map<String, String> ENV = Map.of("HAMI_NODELOCK_EXPIRE", "90s");

  @Test
  void theExtenderConfigsHamiFlagsAreTheSharedParsersResult() {
    String[] hami = {
      "--node-lock-retry-timeout=10s",
      "--extender-http-timeout=20s",
      "--gpu-scheduler-policy=binpack",
      "--node-scheduler-policy",
      "spread"
    };
    List<String> all = new java.util.ArrayList<>(List.of(hami));
    all.addAll(List.of("--port=0", "--bind-address=0.0.0.0"));
    ExtenderConfig c = ExtenderConfig.parse(ENV, all.toArray(String[]::new));
    HamiSchedulerFlags f = HamiSchedulerFlags.parse(ENV, hami);
    assertThat(c.schedulerFlags()).isEqualTo(f);
    assertThat(c.schedulerFlags().nodeLockTimeout())
        .as("HAMI_NODELOCK_EXPIRE, no flag")
        .isEqualTo(f.nodeLockTimeout());
    assertThat(c.schedulerFlags().retryPolicy()).isEqualTo(f.retryPolicy());
  }

  @Test
  void theRefusalsAreTheSharedParsersWithTheSameMessage() {
    for (String bad :
        List.of(
            "--node-lock-retry-timeout=30s",
            "--gpu-scheduler-policy=binpak",
            "--node-lock-timeout=0s",
            "--node-lock-timeout=5 minutes",
            "--node-scheduler-policy=numa")) {
      Throwable shared = catchThrowable(() -> HamiSchedulerFlags.parse(ENV, bad));
      Throwable extender = catchThrowable(() -> ExtenderConfig.parse(ENV, bad));
      assertThat(shared)
          .as(bad)
          .isInstanceOf(HamiSchedulerFlags.InvalidSchedulerFlagException.class);
      assertThat(extender)
          .as(bad)
          .isInstanceOf(InvalidExtenderConfigException.class)
          .hasMessage(shared.getMessage());
    }
  }
}
