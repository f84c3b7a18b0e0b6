package dev.hamilock.examples.extender;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The runnable extender's command line: HAMi#2790 (explicit {@code --node-lock-timeout} &gt; {@code
 * HAMI_NODELOCK_EXPIRE} &gt; 5 min) and HAMi#2767 ({@code --gpu-scheduler-policy=binpak} refuses to
 * start naming the flag, the value and the accepted words).
 */
class Hami2790And2767ExtenderFlagsTest {

  @Test
  void theEnvironmentSetsTheLockTimeoutUnlessTheFlagIsGiven() {
    Map<String, String> env = Map.of("HAMI_NODELOCK_EXPIRE", "1m");
    assertThat(ExtenderOptions.parse(List.of(), env).config().schedulerFlags().nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(
            ExtenderOptions.parse(List.of("--kubeconfig=/k"), env)
                .config()
                .schedulerFlags()
                .nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(1));
    assertThat(
            ExtenderOptions.parse(List.of("--node-lock-timeout=10m"), env)
                .config()
                .schedulerFlags()
                .nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(10));
    assertThat(
            ExtenderOptions.parse(List.of(), Map.of()).config().schedulerFlags().nodeLockTimeout())
        .isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void anUnknownPolicyWordRefusesToStartWithExitOne() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        ExtenderMain.run(
            List.of("--gpu-scheduler-policy=binpak"),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            ext -> {
              throw new AssertionError("must not serve");
            });

    assertThat(code).isEqualTo(ExtenderMain.EXIT_USER_ERROR);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains(
            "refusing to start",
            "--gpu-scheduler-policy",
            "\"binpak\"",
            "binpack, spread, numa, mutex, topology-aware");
  }
}
