package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * The doctor README's {@code audit} sample is this run's output: {@link #seed} on the API emulator.
 * The actual output is also written to {@code target/readme-audit.txt}; {@code AuditJarRun} checks
 * that {@code java -jar target/hami-lock-doctor.jar audit} prints the same.
 */
class ReadmeAuditTest {

  static final String BEGIN = "<!-- doctor-audit-output: begin -->";
  static final String END = "<!-- doctor-audit-output: end -->";

  static final Path SEED = Path.of("src/test/resources/audit/seeded-cluster.yaml");

  /** Creates {@link #SEED}'s objects (its header says what they are), namespace first. */
  static void seed(KubeBackend k8s) throws IOException {
    k8s.createNamespace(AuditTest.NS);
    for (Object doc : new Yaml().loadAll(Files.readString(SEED, StandardCharsets.UTF_8))) {
      k8s.create(doc);
    }
  }

  /** The in-process run's output, ports normalised. */
  static String sampleRun() throws IOException {
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      seed(k8s);
      Fixtures.Run run = Fixtures.run(k8s, Instant.now(), "audit");
      assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(1);
      assertThat(run.err()).isEmpty();
      return normalise(run.out(), k8s.url());
    }
  }

  static String normalise(String out, String url) {
    return out.replace(url, "https://127.0.0.1:6443");
  }

  static String readmeSample() throws IOException {
    return Fixtures.readmeBlock(Path.of("README.md"), BEGIN, END);
  }

  @Test
  void readmeShowsTheAuditOfTheSeededCluster() throws IOException {
    String actual = sampleRun();
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target/readme-audit.txt"), actual, StandardCharsets.UTF_8);
    assertThat(actual).contains("AU01", "AU03", "AU04").doesNotContain("team-a/serve");
    assertThat(readmeSample()).as("README block vs target/readme-audit.txt").isEqualTo(actual);
  }
}
