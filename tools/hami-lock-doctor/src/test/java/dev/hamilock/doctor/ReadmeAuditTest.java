package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.ApiServerEmulator;
import dev.hamilock.testkit.KubeBackend;
import dev.hamilock.testkit.TestPod;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The doctor README's {@code audit} sample is this run's output: {@link #seed} on the API emulator.
 * The actual output is also written to {@code target/readme-audit.txt}; {@code AuditJarRun} checks
 * that {@code java -jar target/hami-lock-doctor.jar audit} prints the same.
 */
class ReadmeAuditTest {

  static final String BEGIN = "<!-- doctor-audit-output: begin -->";
  static final String END = "<!-- doctor-audit-output: end -->";

  /**
   * node-a: one Tesla T4 (15360 MiB) carrying two 10000 MiB pods; node-b: two A40s with a pod whose
   * allocation names a card node-b does not register, a Running GPU pod HAMi never allocated and a
   * pod with a GPU sidecar that fits.
   */
  static void seed(KubeBackend k8s) {
    k8s.createNamespace(AuditTest.NS);
    AuditTest.node(k8s, "node-a", AuditTest.T4);
    AuditTest.node(k8s, "node-b", Fixtures.REGISTRATION);
    String t4 = AuditTest.T4_UUID;
    String a40 = Fixtures.REGISTRATION.substring(0, Fixtures.REGISTRATION.indexOf(','));
    k8s.create(
        AuditTest.hamiPod("train-1", "node-a", "node-a", AuditTest.entry(t4, 10000, 30)).toJson());
    k8s.create(
        AuditTest.hamiPod("train-2", "node-a", "node-a", AuditTest.entry(t4, 10000, 30)).toJson());
    k8s.create(
        AuditTest.hamiPod(
                "stale", "node-b", "node-b", AuditTest.entry(AuditTest.OTHER_UUID, 6144, 30))
            .toJson());
    k8s.create(
        AuditTest.hamiPod(
                "serve",
                "node-b",
                "node-b",
                AuditTest.entry(a40, 8000, 20),
                AuditTest.entry(a40, 20000, 50))
            .sidecarContainer("metrics", "busybox")
            .limit("nvidia.com/gpu", "1")
            .toJson());
    k8s.create(
        TestPod.named(AuditTest.NS, "notebook")
            .nodeName("node-b")
            .phase("Running")
            .container("jupyter", "quay.io/jupyter/pytorch-notebook")
            .limit("nvidia.com/gpu", "1")
            .toJson());
  }

  /** The in-process run's output, ports normalised. */
  static String sampleRun() {
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
