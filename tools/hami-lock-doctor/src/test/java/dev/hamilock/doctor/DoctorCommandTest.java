package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

  /**
   * A new user's {@code hami-lock-doctor unlock node-a} without a kubeconfig was told the
   * kubeconfig was missing, not the {@code --holder}: every command's arguments are checked before
   * any kubeconfig is looked for.
   */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "unlock node-a | unlock needs NODE and --holder NS/POD",
        "unlock node-a --holder nopod | --holder must be NAMESPACE/POD, was \"nopod\"",
        "gang pg | gang needs NAMESPACE/PODGROUP",
        "preempt ns/a/b | preempt needs NAMESPACE/POD",
        "locks extra | locks takes no arguments: [extra]"
      })
  void badArgumentsWithoutKubeconfigNameTheArgumentsNotTheMissingKubeconfig(
      String args, String message) {
    AtomicInteger clientsMade = new AtomicInteger();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        DoctorCommand.run(
            List.of(args.split(" ")),
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            kubeconfig -> {
              clientsMade.incrementAndGet();
              throw new IOException("none found");
            },
            b -> b);
    assertThat(exit).isEqualTo(DoctorReport.EXIT_UNREADABLE);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .startsWith("hami-lock-doctor: " + message + "\nusage: hami-lock-doctor");
    assertThat(clientsMade).hasValue(0);
  }
}
