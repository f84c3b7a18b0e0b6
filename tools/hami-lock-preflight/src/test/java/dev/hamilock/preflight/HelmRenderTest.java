package dev.hamilock.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.ManifestException;
import dev.hamilock.preflight.manifest.ManifestLoader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code helm template} output of HAMi's chart (rendered by hand from {@code
 * charts/hami/templates/scheduler/*.yaml}: {@code ---} separators, {@code # Source:} comments, a
 * document that is only comments, an empty document) is read like plain manifests, and the module
 * README shows that render and this run's output.
 */
class HelmRenderTest {

  static final String RENDER = "src/test/resources/helm/hami-render.yaml";
  static final String RETRY_30S = "src/test/resources/helm/hami-render-retry-30s.yaml";
  static final String RETRY_LINE = "            - --node-lock-retry-timeout=30s\n";

  /** The command's run on {@code files} as the README shows it: command line, output, exit. */
  static String run(String... files) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        PreflightCommand.run(
            List.of(files),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
    String text = out.toString(StandardCharsets.UTF_8);
    StringBuilder line =
        new StringBuilder("$ java -jar tools/hami-lock-preflight/target/preflight.jar");
    for (String file : files) {
      line.append(" tools/hami-lock-preflight/").append(file);
      text = text.replace(file, "tools/hami-lock-preflight/" + file);
    }
    return line + "\n" + text + "(exit " + code + ")\n";
  }

  static String readmeBlock(String readme, String marker) {
    String begin = "<!-- " + marker + ": begin -->";
    String end = "<!-- " + marker + ": end -->";
    int b = readme.indexOf(begin);
    int e = readme.indexOf(end);
    assertThat(b).as("README.md has the %s marker", begin).isNotNegative();
    assertThat(e).isGreaterThan(b);
    String block = readme.substring(b + begin.length(), e);
    int fence = block.indexOf("```");
    return block.substring(block.indexOf('\n', fence) + 1, block.lastIndexOf("```"));
  }

  @Test
  void cleanRenderHasNoFindingsAndTheRetryTimeoutPitfallIsFound() throws ManifestException {
    assertThat(Preflight.standard().run(List.of(Path.of(RENDER))).findings()).isEmpty();

    List<Finding> found = Preflight.standard().run(List.of(Path.of(RETRY_30S))).findings();
    assertThat(found).extracting(Finding::checkId).containsExactly("PF03");
    Finding f = found.get(0);
    assertThat(f.location().document())
        .as("counts the comment-only and empty documents")
        .isEqualTo(9);
    assertThat(f.location().path()).isEqualTo("spec.template.spec.containers[1].command[10]");
    assertThat(f.location().line()).hasValue(196);
  }

  @Test
  void pitfallRenderDiffersOnlyByTheRetryFlag() throws IOException {
    String clean = Files.readString(Path.of(RENDER), StandardCharsets.UTF_8);
    String pitfall = Files.readString(Path.of(RETRY_30S), StandardCharsets.UTF_8);
    assertThat(pitfall.replace(RETRY_LINE, "")).isEqualTo(clean);
    assertThat(pitfall).contains(RETRY_LINE);
  }

  @Test
  void crlfRenderIsJudgedTheSame() throws IOException, ManifestException {
    for (String file : List.of(RENDER, RETRY_30S)) {
      String text = Files.readString(Path.of(file), StandardCharsets.UTF_8);
      Preflight p = Preflight.standard();
      PreflightReport lf = p.check(ManifestLoader.parse("render.yaml", text));
      PreflightReport crlf =
          p.check(ManifestLoader.parse("render.yaml", text.replace("\n", "\r\n")));
      assertThat(crlf).isEqualTo(lf);
    }
  }

  @Test
  void deploymentInsideAListIsJudgedAtItsItemPath() throws IOException, ManifestException {
    String list =
        "apiVersion: v1\nkind: List\nitems:\n"
            + "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: hami-scheduler}\n"
            + "  spec:\n    template:\n      spec:\n        containers:\n"
            + "        - name: vgpu-scheduler-extender\n"
            + "          command: [scheduler, --node-lock-retry-timeout=30s]\n";
    List<ManifestDocument> documents =
        new ArrayList<>(
            ManifestLoader.parse(
                "render.yaml", Files.readString(Path.of(RENDER), StandardCharsets.UTF_8)));
    documents.addAll(ManifestLoader.parse("list.yaml", list));
    List<Finding> found = Preflight.standard().check(documents).findings();
    assertThat(found)
        .filteredOn(g -> g.location().source().equals("list.yaml"))
        .extracting(g -> g.checkId() + " " + g.location().path())
        .containsExactly("PF03 items[0].spec.template.spec.containers[0].command[1]");
  }

  @Test
  void readmeShowsTheRenderAndThisRunsOutput() throws IOException {
    String readme = Files.readString(Path.of("README.md"), StandardCharsets.UTF_8);
    assertThat(readmeBlock(readme, "helm-render"))
        .isEqualTo(Files.readString(Path.of(RENDER), StandardCharsets.UTF_8));
    String actual = run(RENDER) + run(RETRY_30S);
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target/readme-helm-render.txt"), actual, StandardCharsets.UTF_8);
    assertThat(readmeBlock(readme, "helm-render-output"))
        .as("README block vs target/readme-helm-render.txt")
        .isEqualTo(actual);
  }
}
