package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.ApiServerEmulator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar target/hami-lock-doctor.jar --kubeconfig F audit} in its own process, as users
 * run it, against the API emulator seeded as in the README ({@link ReadmeAuditTest#seed}). Runs in
 * the {@code integration-test} phase, after {@code package} built the jar (surefire execution
 * {@code jar-process} in this module's pom).
 */
@Tag("jar-process")
class AuditJarRun {

  @Test
  void theRunnableJarAuditsTheSeededClusterAsTheReadmeShows() throws Exception {
    Path jar = Path.of("target/hami-lock-doctor.jar");
    assertThat(jar).as("built by package").isRegularFile();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      ReadmeAuditTest.seed(k8s);
      String kubeconfig = k8s.kubeconfigFile().toString();
      Run table = run(java, "-jar", jar.toString(), "--kubeconfig", kubeconfig, "audit");
      assertThat(table.exit).as(table.out + table.err).isEqualTo(1);
      assertThat(table.err).isEmpty();
      assertThat(ReadmeAuditTest.normalise(table.out, k8s.url()))
          .isEqualTo(ReadmeAuditTest.readmeSample());
      Run json = run(java, "-jar", jar.toString(), "--kubeconfig", kubeconfig, "--json", "audit");
      assertThat(json.exit).isEqualTo(1);
      assertThat(json.out).contains("\"command\": \"audit\"", "\"check\": \"AU01\"");
    }
  }

  private record Run(int exit, String out, String err) {}

  private static Run run(String... command) throws IOException, InterruptedException {
    Path out = Files.createTempFile("audit-out", ".txt");
    Path err = Files.createTempFile("audit-err", ".txt");
    try {
      Process p =
          new ProcessBuilder(List.of(command))
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      // a guard against a hung process, not a timing assertion
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(List.of(command) + " still ran after 120 s");
      }
      return new Run(
          p.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }
}
