package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DoctorCommandTest {

  /**
   * A new user's {@code hami-lock-doctor bogus} on a machine without a kubeconfig was answered
   * "cannot use kubeconfig (default): none found": the command is checked before any kubeconfig is
   * looked for.
   */
  @Test
  void unknownCommandWithoutKubeconfigNamesTheCommandNotTheMissingKubeconfig() {
    AtomicInteger clientsMade = new AtomicInteger();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        DoctorCommand.run(
            List.of("bogus"),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            kubeconfig -> {
              clientsMade.incrementAndGet();
              throw new IOException("none found");
            },
            b -> b);
    assertThat(exit).isEqualTo(DoctorReport.EXIT_UNREADABLE);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .startsWith("hami-lock-doctor: unknown command bogus\nusage: hami-lock-doctor")
        .doesNotContain("kubeconfig (default)");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(clientsMade).hasValue(0);
  }
}
