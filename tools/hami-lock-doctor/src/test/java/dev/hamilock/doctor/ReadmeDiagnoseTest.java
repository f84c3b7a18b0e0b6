package dev.hamilock.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.testkit.ApiServerEmulator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The root README's "When gang pods stay Pending" output is this run's output: the guide's gang
 * with one member's {@code scheduling.x-k8s.io/pod-group} under annotations, on the API emulator.
 * The actual output is also written to {@code target/readme-diagnose.txt}.
 */
class ReadmeDiagnoseTest {

  static final String BEGIN = "<!-- doctor-diagnose-output: begin -->";
  static final String END = "<!-- doctor-diagnose-output: end -->";

  @Test
  @SuppressWarnings("unchecked")
  void readmeShowsTheOutputOfThisBrokenSetUp() throws IOException {
    String actual;
    try (ApiServerEmulator k8s = ApiServerEmulator.start()) {
      k8s.createNamespace("hami-system");
      Fixtures.applyGuide(k8s, "scheduler-config.yaml", d -> d);
      Fixtures.applyGuide(
          k8s,
          "gang-training.yaml",
          d -> {
            Map<String, Object> meta = Fixtures.map(d, "metadata");
            if ("gang-worker-4".equals(meta.get("name"))) {
              Object g = Fixtures.map(meta, "labels").remove("scheduling.x-k8s.io/pod-group");
              Fixtures.map(meta, "annotations").put("scheduling.x-k8s.io/pod-group", g);
            }
            return d;
          });
      Fixtures.gpuNode(k8s, "gpu-node-a");
      Fixtures.gpuNode(k8s, "gpu-node-b");
      Fixtures.Run run = Fixtures.run(k8s, Instant.now(), "diagnose");
      assertThat(run.exit()).isEqualTo(1);
      actual = run.out().replace(k8s.url(), "https://127.0.0.1:6443");
    }
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target/readme-diagnose.txt"), actual, StandardCharsets.UTF_8);
    String shown = Fixtures.readmeBlock(Path.of("../../README.md"), BEGIN, END);
    assertThat(shown).as("README block vs target/readme-diagnose.txt").isEqualTo(actual);
  }
}
